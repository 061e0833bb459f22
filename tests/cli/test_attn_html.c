/* The attention page (cli/viz/attn_*.c): the record of a forward's
 * attention calls holds exactly what the attention used; the data block a
 * page embeds, read back as JSON, has the model's shapes, rows that sum to 1,
 * exact zeros where the causal mask or the padding forbid a key, and the
 * weights the model's own forward gives; the page asks for nothing outside
 * itself; bad arguments are errors that name them. */
#include <stdlib.h>
#include <unistd.h>

#include "error_text.h"
#include "attn_page_read.h"
#include "cli/viz/viz_internal.h"
#include "testing.h"

/* softmax(q·kᵀ/√d + mask)·v from the page's own q, k, v gives its weights
 * and outputs: the numbers of the step-by-step view are the model's. */
static void check_steps(const jval *v, int n_valid, bool causal)
{
    int H = json_get_int(v, "heads"), Tq = json_get_int(v, "Tq"), Tk = json_get_int(v, "Tk"), C = json_get_int(v, "C");
    int d = C / H;
    const jval *layer = &json_get(v, "data")->items[0];
    const jval *q = json_get(layer, "q"), *k = json_get(layer, "k"), *val = json_get(layer, "v");
    const jval *w = json_get(layer, "w"), *out = json_get(layer, "out");
    double worst_w = 0, worst_out = 0, *p = malloc((size_t)Tk * sizeof *p);
    for (int h = 0; h < H; h++)
        for (int i = 0; i < Tq; i++) {
            double top = -INFINITY, sum = 0;
            for (int j = 0; j < Tk; j++) {
                double s = 0;
                for (int c = 0; c < d; c++)
                    s += q->items[i * C + h * d + c].num * k->items[j * C + h * d + c].num;
                p[j] = j >= n_valid || (causal && j > i) ? -INFINITY : s / sqrt(d);
                top = fmax(top, p[j]);
            }
            for (int j = 0; j < Tk; j++)
                sum += p[j] = exp(p[j] - top);
            for (int j = 0; j < Tk; j++)
                worst_w = fmax(worst_w, fabs(p[j] / sum - w->items[(h * Tq + i) * Tk + j].num));
            for (int c = 0; c < d; c++) {
                double y = 0;
                for (int j = 0; j < Tk; j++)
                    y += p[j] / sum * val->items[j * C + h * d + c].num;
                double model = out->items[i * C + h * d + c].num;
                worst_out = fmax(worst_out, fabs(y - model) / (1 + fabs(model)));
            }
        }
    free(p);
    ck_assert_msg(worst_w < 1e-3, "softmax(q·k/√d) is %g from the page's weights", worst_w);
    ck_assert_msg(worst_out < 1e-3, "Σ w·v is %g from the page's outputs", worst_out);
}

static void temp_path(char *path, size_t len, const char *name)
{
    char dir[64];
    qkv_test_make_tmpdir(dir, sizeof dir, "qkv_attn_html");
    snprintf(path, len, "%s/%s", dir, name);
}

/* Remove the page at path and its directory. */
static void remove_page(const char *path)
{
    unlink(path);
    char dir[256];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    ck_assert_int_eq(rmdir(dir), 0);
}

/* Scale every parameter so a fresh model's attention is far from uniform. */
static void sharpen(qkv_params *p, qkv_real by)
{
    for (size_t i = 0; i < p->total; i++)
        p->data[i] *= by;
}

static const char *TEXT = "to be, or not to be: that is";

static qkv_gpt *tiny_gpt(qkv_tokenizer *vocab)
{
    qkv_tokenizer_build(vocab, TEXT, strlen(TEXT));
    qkv_gpt_config cfg = {.vocab_size = vocab->size, .block_size = 32, .n_layer = 2, .n_head = 2,
                          .n_embd = 16};
    qkv_gpt *m = qkv_gpt_new(&cfg, 3);
    ck_assert_qkv(m);
    sharpen(m->params, 8);
    return m;
}

static qkv_seq2seq *tiny_seq2seq(void)
{
    qkv_tokenizer chars;
    const char *alphabet = "abcdefghijklmnopqrstuvwxyz";
    qkv_tokenizer_build(&chars, alphabet, strlen(alphabet));
    qkv_seq2seq_config cfg = {.max_src = 12, .max_tgt = 10, .n_layer = 2, .n_head = 2,
                              .n_embd = 16};
    qkv_seq2seq *m = qkv_seq2seq_new(&cfg, &chars, 5);
    ck_assert_qkv(m);
    sharpen(m->params, 6);
    return m;
}

/* ---- tests ---- */

/* The GPT's forward on text (grad off), built in a: its logits (1,T,V),
 * and each of its 2 layers' attention weights into w. */
static qkv_tensor *forward_of(const qkv_gpt *m, const qkv_tokenizer *vocab, const char *text,
                              qkv_arena *a, qkv_tensor *w[2])
{
    qkv_ctx ctx = {.arena = a};
    int32_t ids[64];
    int T = (int)strlen(text);
    ck_assert_int_le(T, 64);
    ck_assert_int_eq(qkv_encode(vocab, text, (size_t)T, ids), 0);
    bool was = qkv_set_grad_enabled(false);
    qkv_tensor *logits = qkv_gpt_logits(m, &ctx, ids, 1, T, w);
    qkv_set_grad_enabled(was);
    ck_assert_qkv(logits);
    return logits;
}

START_TEST(test_record_holds_what_the_attention_used)
{
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 1, .opts.no_bias = true};
    qkv_params *p = qkv_params_new();
    qkv_self_attn attn;
    qkv_rng rng;
    qkv_rng_seed(&rng, 11);
    ck_assert_int_eq(qkv_self_attn_init(&attn, p, "attn", &cfg, true), 0);
    ck_assert_int_eq(qkv_params_alloc(p, &rng), 0);
    sharpen(p, 20);
    qkv_attn_call calls[2];
    qkv_attn_record rec = {.calls = calls, .cap = 2};
    qkv_ctx ctx = {.arena = qkv_arena_new(1 << 16), .record = &rec};
    int T = 5, C = 8, D = 4;
    qkv_tensor *x = qkv_randn(ctx.arena, QKV_SHAPE(1, T, C), 1, &rng), *w = NULL;
    ck_assert_qkv(qkv_self_attn_forward(&attn, &ctx, x, NULL, &w));
    ck_assert_int_eq(rec.n, 1);
    const qkv_attn_call *c = &calls[0];
    ck_assert_ptr_eq(c->weights, w); /* the same weights the caller asked for */
    ck_assert(c->mask.causal && c->n_head == 2);
    ck_assert_int_eq(c->q->shape[1], T);
    ck_assert_int_eq(c->out->shape[2], C);
    /* out = softmax(q·kᵀ/√D, causal)·v, head by head, from the recorded tensors. */
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < T; i++) {
            double s[5], top = -INFINITY, sum = 0;
            for (int j = 0; j <= i; j++) {
                s[j] = 0;
                for (int e = 0; e < D; e++)
                    s[j] += c->q->data[i * C + h * D + e] * c->k->data[j * C + h * D + e];
                top = fmax(top, s[j] /= sqrt(D));
            }
            for (int j = 0; j <= i; j++)
                sum += s[j] = exp(s[j] - top);
            for (int j = 0; j < T; j++)
                ck_assert_double_eq_tol(w->data[(h * T + i) * T + j], j <= i ? s[j] / sum : 0,
                                        1e-5);
            for (int e = 0; e < D; e++) {
                double y = 0;
                for (int j = 0; j <= i; j++)
                    y += s[j] / sum * c->v->data[j * C + h * D + e];
                ck_assert_double_eq_tol(c->out->data[i * C + h * D + e], y, 1e-5);
            }
        }
    /* A full record counts the calls it could not keep and writes no further. */
    rec = (qkv_attn_record){.calls = calls, .cap = 0};
    ck_assert_qkv(qkv_self_attn_forward(&attn, &ctx, x, NULL, NULL));
    ck_assert_int_eq(rec.n, 1);
    rec = (qkv_attn_record){.cap = 4}; /* no slots at all: counted, nothing written */
    ck_assert_qkv(qkv_self_attn_forward(&attn, &ctx, x, NULL, NULL));
    ck_assert_int_eq(rec.n, 1);
    qkv_arena_free(&ctx.arena);
    qkv_params_free(&p);
}
END_TEST

/* qkv_set_record_weights(false): the record keeps every call's q, k, v,
 * out and mask but no weights, and qkv_attention_weights gives from the
 * call's q and k the weights a record with them on would have held. */
START_TEST(test_record_without_weights_keeps_what_gives_them)
{
    qkv_tokenizer vocab;
    qkv_gpt *m = tiny_gpt(&vocab);
    int32_t ids[32];
    int T = (int)strlen(TEXT);
    ck_assert_int_eq(qkv_encode(&vocab, TEXT, (size_t)T, ids), 0);
    qkv_attn_call with[2], without[2];
    qkv_arena *a = qkv_arena_new(1 << 16);
    bool was = qkv_set_grad_enabled(false);
    for (int pass = 0; pass < 2; pass++) {
        qkv_attn_record rec = {.calls = pass ? without : with, .cap = 2};
        qkv_ctx ctx = {.arena = a, .record = &rec};
        ck_assert(qkv_set_record_weights(pass == 0) == true); /* on: the default */
        ck_assert_qkv(qkv_gpt_logits(m, &ctx, ids, 1, T, NULL));
        ck_assert(qkv_set_record_weights(true) == (pass == 0));
        ck_assert_int_eq(rec.n, 2);
    }
    qkv_set_grad_enabled(was);
    for (int l = 0; l < 2; l++) {
        const qkv_attn_call *c = &without[l];
        ck_assert_ptr_null(c->weights);
        ck_assert_ptr_nonnull(with[l].weights);
        ck_assert(c->mask.causal && c->n_head == 2);
        ck_assert_mem_eq(c->out->data, with[l].out->data, c->out->size * sizeof(qkv_real));
        qkv_tensor *w = qkv_attention_weights(a, c->q, c->k, c->n_head, &c->mask, 0, T);
        ck_assert_qkv(w);
        ck_assert(qkv_same_shape(w, with[l].weights));
        ck_assert_mem_eq(w->data, with[l].weights->data, w->size * sizeof(qkv_real));
    }
    qkv_arena_free(&a);
    qkv_gpt_free(m);
}
END_TEST

START_TEST(test_gpt_page_holds_the_model_weights)
{
    qkv_tokenizer vocab;
    qkv_gpt *m = tiny_gpt(&vocab);
    char path[128];
    temp_path(path, sizeof path, "gpt.html");
    ck_assert_msg(attn_html_gpt(path, m, &vocab, TEXT) == 0, "%s", qkv_last_error());
    jval data = attn_page_data(path);
    ck_assert_str_eq(json_get(&data, "model")->str, "gpt");
    ck_assert_int_eq(json_get(&data, "colours")->n, 17);
    const jval *views = json_get(&data, "views");
    ck_assert_int_eq(views->n, 1);
    int T = (int)strlen(TEXT);
    const jval *v = &views->items[0];
    ck_assert_str_eq(json_get(v, "id")->str, "self");
    /* Every weight above the diagonal, in every layer and head, is exactly 0. */
    ck_assert_int_eq(attn_check_view(v, 2, 2, T, T, 16, true, TEXT, T), 2 * 2 * T * (T - 1) / 2);
    check_steps(v, T, true);

    /* The weights are the model's: the same as its forward's weights out parameter. */
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_tensor *w[2], *logits = forward_of(m, &vocab, TEXT, a, w);
    for (int l = 0; l < 2; l++) {
        const jval *page_w = json_get(&json_get(v, "data")->items[l], "w");
        for (size_t i = 0; i < w[l]->size; i++)
            ck_assert_double_eq_tol(page_w->items[i].num, w[l]->data[i],
                                    1e-4 * fabs(w[l]->data[i]) + 1e-30);
    }
    /* The next character's logits are the forward's for the last position,
     * one per character of the vocabulary. */
    const jval *next = json_get(&data, "next"), *chars = json_get(next, "chars"), *nl = json_get(next, "logits");
    int V = vocab.size;
    ck_assert_int_eq(chars->n, V);
    ck_assert_int_eq(nl->n, V);
    for (int i = 0; i < V; i++) {
        ck_assert_int_eq(chars->items[i].str[0], vocab.byte[i] == ' ' ? '\xE2' : vocab.byte[i]);
        double want = logits->data[(size_t)(T - 1) * V + i];
        ck_assert_double_eq_tol(nl->items[i].num, want, 1e-4 * fabs(want) + 1e-6);
    }
    ck_assert_str_eq(json_get(&data, "text")->str, TEXT);
    qkv_arena_free(&a);
    json_free(&data);
    remove_page(path);
    qkv_gpt_free(m);
}
END_TEST

START_TEST(test_seq2seq_page_shows_padding_with_zero_weight)
{
    qkv_seq2seq *m = tiny_seq2seq();
    char path[128], output[12];
    temp_path(path, sizeof path, "s2s.html");
    ck_assert_msg(attn_html_seq2seq(path, m, "hello") == 0, "%s", qkv_last_error());
    char *outs[1] = {output};
    const char *in = "hello";
    ck_assert_int_eq(qkv_seq2seq_translate(m, 1, &in, outs), 0);
    int Tt = (int)strlen(output) + 1 <= 10 ? (int)strlen(output) + 1 : 10;
    jval data = attn_page_data(path);
    ck_assert_str_eq(json_get(&data, "model")->str, "seq2seq");
    const jval *views = json_get(&data, "views");
    ck_assert_int_eq(views->n, 3);
    ck_assert_str_eq(json_get(&views->items[0], "id")->str, "enc");
    ck_assert_str_eq(json_get(&views->items[1], "id")->str, "dec");
    ck_assert_str_eq(json_get(&views->items[2], "id")->str, "cross");
    /* "hello" padded to max_src = 12: 7 padding keys for every one of the 12
     * encoder queries and Tt decoder queries, in every layer and head. */
    ck_assert_int_eq(attn_check_view(&views->items[0], 2, 2, 12, 12, 16, false, "hello", 5),
                     2 * 2 * 12 * 7);
    ck_assert_int_eq(attn_check_view(&views->items[1], 2, 2, Tt, Tt, 16, true, NULL, Tt),
                     2 * 2 * Tt * (Tt - 1) / 2);
    ck_assert_int_eq(attn_check_view(&views->items[2], 2, 2, Tt, 12, 16, false, "hello", 5),
                     2 * 2 * Tt * 7);
    ck_assert_str_eq(json_get(&views->items[0], "cols")->items[5].str, "\xC2\xB7");
    check_steps(&views->items[0], 5, false);
    check_steps(&views->items[1], Tt, true);
    check_steps(&views->items[2], 5, false);
    /* The decoder's rows are the output the model wrote. */
    const jval *rows = json_get(&views->items[2], "rows");
    for (int t = 0; t < (int)strlen(output); t++)
        ck_assert_int_eq(rows->items[t].str[0], output[t]);
    json_free(&data);
    remove_page(path);
    qkv_seq2seq_free(m);
}
END_TEST

START_TEST(test_page_asks_for_nothing_outside_itself)
{
    qkv_tokenizer vocab;
    qkv_gpt *m = tiny_gpt(&vocab);
    char path[128];
    temp_path(path, sizeof path, "gpt.html");
    /* Characters that could end the data block or the page stay inside JSON strings. */
    const char *nasty = "</script><b>&\"\\";
    qkv_tokenizer_build(&vocab, nasty, strlen(nasty));
    ck_assert_int_le(vocab.size, m->cfg.vocab_size);
    ck_assert_msg(attn_html_gpt(path, m, &vocab, nasty) == 0, "%s", qkv_last_error());
    char *text = qkv_test_read_file(path, NULL);
    ck_assert_msg(strncmp(text, "<!DOCTYPE html>", 15) == 0, "not an HTML page");
    ck_assert_ptr_nonnull(strstr(text, "Content-Security-Policy\" content=\"default-src 'none'"));
    const char *requests[] = {"<link", " src=", "href=", "url(", "@import", "fetch(",
                              "XMLHttpRequest", "https:"};
    for (size_t i = 0; i < sizeof requests / sizeof *requests; i++)
        ck_assert_msg(!strstr(text, requests[i]), "the page contains %s", requests[i]);
    ck_assert_msg(!strstr(text, "wasm-unsafe-eval"), "a recorded page may compile WebAssembly");
    /* One data block, one script after it, and the text only as JSON escapes. */
    ck_assert_ptr_null(strstr(text, "</script><b>"));
    ck_assert_ptr_nonnull(strstr(text, "[\"\\u003c\",\"/\",\"s\",\"c\""));
    ck_assert_ptr_nonnull(strstr(text, "\"\\u0026\",\"\\\"\",\"\\\\\"]"));
    free(text);
    jval data = attn_page_data(path);
    const jval *cols = json_get(&json_get(&data, "views")->items[0], "cols");
    ck_assert_str_eq(cols->items[0].str, "<");
    ck_assert_str_eq(cols->items[14].str, "\\");
    json_free(&data);
    remove_page(path);
    qkv_gpt_free(m);
}
END_TEST

/* The page written is cli/viz/attn_page.html, the file the build
 * embeds, byte for byte, with the data in its (there empty) data block. */
START_TEST(test_page_is_the_page_file_with_the_data_in_its_block)
{
    qkv_tokenizer vocab;
    qkv_gpt *m = tiny_gpt(&vocab);
    char path[128];
    temp_path(path, sizeof path, "gpt.html");
    ck_assert_msg(attn_html_gpt(path, m, &vocab, "to be") == 0, "%s", qkv_last_error());
    char *page = qkv_test_read_file(path, NULL), *file = qkv_test_read_file("cli/viz/attn_page.html", NULL);
    const char *marker = "<script type=\"application/json\" id=\"qkv-data\">";
    const char *block = strstr(file, marker);
    ck_assert_msg(block && !strstr(block + 1, marker), "not one data block in attn_page.html");
    size_t head = (size_t)(block - file) + strlen(marker), tail = strlen(file) - head;
    size_t len = strlen(page);
    ck_assert_msg(len > head + tail && memcmp(page, file, head) == 0,
                  "the page does not start as attn_page.html does, up to its data block");
    ck_assert_msg(memcmp(page + len - tail, file + head, tail) == 0,
                  "the page does not end as attn_page.html does, from its data block's end");
    ck_assert_msg(page[head] == '{' && strncmp(page + len - tail - 2, "}\n", 2) == 0,
                  "the data block is not the JSON object alone");
    free(page);
    free(file);
    remove_page(path);
    qkv_gpt_free(m);
}
END_TEST

START_TEST(test_bad_arguments_are_errors_that_name_them)
{
    qkv_tokenizer vocab;
    qkv_gpt *m = tiny_gpt(&vocab);
    qkv_seq2seq *s = tiny_seq2seq();
    char path[128];
    temp_path(path, sizeof path, "x.html");
#define REFUSED(call, ...)                                                                      \
    do {                                                                                       \
        ck_assert_int_eq((call), -1);                                                          \
        ck_assert_error(__VA_ARGS__);                                                          \
    } while (0)
    REFUSED(attn_html_gpt(NULL, m, &vocab, "to"), "attn_html_gpt", "path is NULL");
    REFUSED(attn_html_gpt(path, NULL, &vocab, "to"), "attn_html_gpt", "m is NULL");
    REFUSED(attn_html_gpt(path, m, NULL, "to"), "attn_html_gpt", "vocab is NULL");
    REFUSED(attn_html_gpt(path, m, &vocab, NULL), "attn_html_gpt", "text is NULL");
    REFUSED(attn_html_gpt(path, m, &vocab, ""), "text has 0 characters", "1 to 32");
    REFUSED(attn_html_gpt(path, m, &vocab, "to be, or not to be: that is the q"),
            "text has 34 characters");
    REFUSED(attn_html_gpt(path, m, &vocab, "toZ"), "'Z'");
    REFUSED(attn_html_seq2seq(NULL, s, "hello"), "attn_html_seq2seq", "path is NULL");
    REFUSED(attn_html_seq2seq(path, NULL, "hello"), "attn_html_seq2seq", "m is NULL");
    REFUSED(attn_html_seq2seq(path, s, NULL), "attn_html_seq2seq", "input is NULL");
    REFUSED(attn_html_seq2seq(path, s, "HELLO"), "HELLO");
    REFUSED(attn_html_seq2seq(path, s, "abcdefghijklm"), "abcdefghijklm");
#undef REFUSED
    ck_assert_int_eq(access(path, F_OK), -1); /* no refused call leaves a file */
    ck_assert_int_eq(attn_html_gpt("/nonexistent/dir/a.html", m, &vocab, "to"), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "/nonexistent/dir/a.html"));
    /* A device is never written to (nor replaced). */
    ck_assert_int_eq(attn_html_seq2seq("/dev/full", s, "hello"), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "cannot write '/dev/full': it is a character "
                                                   "device"));
    remove_page(path);
    qkv_seq2seq_free(s);
    qkv_gpt_free(m);
}
END_TEST

/* A live page: the module's JavaScript inline, its bytes and the checkpoint's
 * as base64 in their blocks, before the data, whose numbers are the floats
 * themselves (9 digits), so the page can check its module against them. */
START_TEST(test_live_page_embeds_the_module_and_the_weights)
{
    qkv_tokenizer vocab;
    qkv_gpt *m = tiny_gpt(&vocab);
    char path[128];
    temp_path(path, sizeof path, "live.html");
    const unsigned char wasm[8] = {0, 'a', 's', 'm', 1, 0, 0, 0};
    attn_live live = {.module_js = "var qkvLive = function () {}; /* a < b */", .wasm = wasm,
                      .wasm_len = sizeof wasm, .ckpt = "abcde", .ckpt_len = 5};
    ck_assert_msg(attn_html_gpt_live(path, m, &vocab, "to be", &live) == 0, "%s", qkv_last_error());
    char *text = qkv_test_read_file(path, NULL);
    /* base64 by RFC 4648: "\0asm\1\0\0\0" and "abcde" (one '=' of padding). */
    const char *w64 = strstr(text, "<script type=\"application/octet-stream\" id=\"qkv-wasm\">AGFzbQEAAAA=</script>");
    const char *c64 = strstr(text, "<script type=\"application/octet-stream\" id=\"qkv-ckpt\">YWJjZGU=</script>");
    const char *js = strstr(text, "<script id=\"qkv-module\">\nvar qkvLive = function () {}; /* a < b */\n</script>");
    const char *data = strstr(text, "id=\"qkv-data\">");
    ck_assert_msg(w64 && c64 && js && data && w64 < c64 && c64 < js && js < data,
                  "the live blocks are not there, in order, before the data");
    ck_assert_ptr_nonnull(strstr(text, "connect-src 'none'"));
    ck_assert_ptr_nonnull(strstr(text, "script-src 'unsafe-inline' 'wasm-unsafe-eval'\">"));
    free(text);
    jval d = attn_page_data(path);
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_tensor *w[2];
    forward_of(m, &vocab, "to be", a, w);
    for (int l = 0; l < 2; l++) {
        const jval *page_w = json_get(&json_get(&json_get(&d, "views")->items[0], "data")->items[l], "w");
        for (size_t i = 0; i < w[l]->size; i++)
            ck_assert_msg((float)page_w->items[i].num == (float)w[l]->data[i],
                          "weight %zu of layer %d: %.9g in the page, %.9g in the model", i, l,
                          page_w->items[i].num, (double)w[l]->data[i]);
    }
    qkv_arena_free(&a);
    json_free(&d);
    remove_page(path);
    /* A module whose text would end its own block is refused; nothing is written. */
    temp_path(path, sizeof path, "live.html");
    live.module_js = "x = '</SCRIPT>';";
    ck_assert_int_eq(attn_html_gpt_live(path, m, &vocab, "to be", &live), -1);
    ck_assert_error("attn_html_gpt_live", "contains \"</script\"");
    ck_assert_int_eq(access(path, F_OK), -1);
    live.module_js = "";
    live.wasm = NULL;
    ck_assert_int_eq(attn_html_gpt_live(path, m, &vocab, "to be", &live), -1);
    ck_assert_error("attn_html_gpt_live", "live->wasm is NULL");
    ck_assert_int_eq(access(path, F_OK), -1);
    remove_page(path);
    qkv_gpt_free(m);
}
END_TEST

/* Where the live module's page data goes: the JSON with every number array
 * as {"f":offset,"n":count} into one float array, which holds the forward's
 * floats exactly. */
static int keep_binary(const qkv__attn_page *p, void *user)
{
    qkv__attn_json *t = user;
    t->binary = true;
    return qkv__attn_json_data(t, p);
}

START_TEST(test_binary_data_holds_the_forward_floats)
{
    qkv_tokenizer vocab;
    qkv_gpt *m = tiny_gpt(&vocab);
    qkv__attn_json t = {0};
    ck_assert_msg(qkv__attn_record_gpt("test", m, &vocab, "not to be", keep_binary, &t) == 0, "%s",
                  qkv_last_error());
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_tensor *w[2], *logits = forward_of(m, &vocab, "not to be", a, w);
    /* The first array written is the next character's logits, then layer 0's weights. */
    int V = vocab.size, n = 2 * 9 * 9;
    char want[96];
    snprintf(want, sizeof want, "\"logits\":{\"f\":0,\"n\":%d}", V);
    ck_assert_msg(strstr(t.text, want), "no %s in %.200s", want, t.text);
    snprintf(want, sizeof want, "\"w\":{\"f\":%d,\"n\":%d}", V, n);
    ck_assert_msg(strstr(t.text, want), "no %s in the data", want);
    ck_assert_mem_eq(t.bin, logits->data + 8 * V, (size_t)V * sizeof *t.bin);
    ck_assert_mem_eq(t.bin + V, w[0]->data, (size_t)n * sizeof *t.bin);
    qkv__attn_json_free(&t);
    qkv_arena_free(&a);
    qkv_gpt_free(m);
}
END_TEST

static int keep_json(const qkv__attn_page *p, void *user) { return qkv__attn_json_data(user, p); }

/* The encoder-decoder reading an output teacher-forced (what the live page
 * does when the reader edits the output): for its own greedy answer the
 * weights are those of the page of its decoding, and after each prefix of
 * that answer the most likely next token is the answer's next one. */
START_TEST(test_seq2seq_forced_output_is_the_greedy_decoding)
{
    qkv_seq2seq *m = tiny_seq2seq();
    char answer[12];
    char *outs[1] = {answer};
    const char *in = "hello";
    ck_assert_int_eq(qkv_seq2seq_translate(m, 1, &in, outs), 0);
    /* The decoder reads at most max_tgt = 10 tokens: BOS and 9 of the answer. */
    int n = (int)strlen(answer), k = n < 10 ? n : 9;
    char head[12];
    snprintf(head, sizeof head, "%.*s", k, answer);
    qkv__attn_json decoded = {0}, forced = {0};
    ck_assert_int_eq(qkv__attn_record_seq2seq("test", m, in, NULL, keep_json, &decoded), 0);
    ck_assert_int_eq(qkv__attn_record_seq2seq("test", m, in, head, keep_json, &forced), 0);
    const char *a = strstr(decoded.text, "\"views\":"), *b = strstr(forced.text, "\"views\":");
    /* The same numbers; only the last decoder row's label differs ("⏎" decoded, "?" forced). */
    jreader ra = {a + 8, false}, rb = {b + 8, false};
    jval va, vb;
    json_read_value(&ra, &va);
    json_read_value(&rb, &vb);
    for (int k = 0; k < 3; k++) {
        const jval *da = json_get(&va.items[k], "data"), *db = json_get(&vb.items[k], "data");
        for (int l = 0; l < 2; l++)
            for (int f = 0; f < da->items[l].n; f++) {
                const jval *xa = &da->items[l].items[f], *xb = &db->items[l].items[f];
                ck_assert_int_eq(xa->n, xb->n);
                for (int i = 0; i < xa->n; i++)
                    ck_assert_double_eq(xa->items[i].num, xb->items[i].num);
            }
    }
    json_free(&va);
    json_free(&vb);
    qkv__attn_json_free(&decoded);
    qkv__attn_json_free(&forced);
    for (int t = 0; t <= k; t++) {
        char prefix[12];
        snprintf(prefix, sizeof prefix, "%.*s", t, answer);
        qkv__attn_json j = {0};
        ck_assert_int_eq(qkv__attn_record_seq2seq("test", m, in, prefix, keep_json, &j), 0);
        jreader r = {strstr(j.text, "\"next\":") + 7, false};
        jval next;
        json_read_value(&r, &next);
        const jval *chars = json_get(&next, "chars"), *lg = json_get(&next, "logits");
        int best = 0;
        for (int i = 1; i < lg->n; i++)
            if (lg->items[i].num > lg->items[best].num)
                best = i;
        /* Token 2 is EOS, shown as ⏎, after the whole answer. */
        if (t < n)
            ck_assert_int_eq(chars->items[best].str[0], answer[t]);
        else
            ck_assert_int_eq(best, QKV_SEQ2SEQ_EOS);
        json_free(&next);
        qkv__attn_json_free(&j);
    }
    qkv_seq2seq_free(m);
}
END_TEST

static Suite *attn_html_suite(void)
{
    Suite *s = suite_create("attn_html");
    TCase *tc = tcase_create("attn_html");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_record_holds_what_the_attention_used);
    tcase_add_test(tc, test_record_without_weights_keeps_what_gives_them);
    tcase_add_test(tc, test_gpt_page_holds_the_model_weights);
    tcase_add_test(tc, test_seq2seq_page_shows_padding_with_zero_weight);
    tcase_add_test(tc, test_page_asks_for_nothing_outside_itself);
    tcase_add_test(tc, test_page_is_the_page_file_with_the_data_in_its_block);
    tcase_add_test(tc, test_bad_arguments_are_errors_that_name_them);
    tcase_add_test(tc, test_live_page_embeds_the_module_and_the_weights);
    tcase_add_test(tc, test_binary_data_holds_the_forward_floats);
    tcase_add_test(tc, test_seq2seq_forced_output_is_the_greedy_decoding);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(attn_html_suite)
