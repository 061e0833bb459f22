/* Attention pictures: the encoder-decoder's cross-attention while it
 * decodes one input, and any attention's weights as an SVG heatmap (see
 * qkv/seq2seq.h). */
#include <math.h>
#include <stdio.h>

#include "../tensor/check.h"
#include "qkv/seq2seq.h"
#include "qkv/svg.h"

qkv_tensor *qkv_seq2seq_cross_weights(const qkv_seq2seq *m, const qkv_run *r, const char *input,
                                      int layer, char *output)
{
    const char *fn = "qkv_seq2seq_cross_weights";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "r", r) || qkv__null(fn, "input", input) ||
        qkv__null(fn, "output", output))
        return NULL;
    if (!r->arena) {
        qkv_set_error("%s: r->arena is NULL: the weights come from it", fn);
        return NULL;
    }
    int L = m->cfg.n_layer, Tmax = m->cfg.max_tgt;
    if (layer < 0 || layer >= L) {
        qkv_set_error("qkv_seq2seq_cross_weights: layer %d does not exist; the decoder has layers 0 to %d", layer,
                      L - 1);
        return NULL;
    }
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(m, 1);
    int32_t *out = qkv_arena_alloc(r->arena, 2 * (size_t)Tmax * sizeof *out), *dec_in = out + Tmax;
    qkv_tensor **w = qkv_arena_calloc(r->arena, (size_t)L * sizeof *w);
    qkv_tensor *result = NULL;
    if (!b || !out || !w || qkv_seq2seq_batch_fill(m, b, 1, &input, NULL) < 0 ||
        qkv_seq2seq_greedy(m, b->src, b->src_valid, 1, b->Ts, true, out) < 0)
        goto done;
    qkv_seq2seq_detokenize(m, out, output);
    /* Replay the decoding teacher-forced: the decoder reads BOS and its own
     * answer, and row t of the weights is the query that produced token t. */
    int Tt = 1;
    dec_in[0] = QKV_SEQ2SEQ_BOS;
    for (; Tt < Tmax && out[Tt - 1] >= QKV_SEQ2SEQ_N_SPECIAL; Tt++)
        dec_in[Tt] = out[Tt - 1];
    bool was = qkv_set_grad_enabled(false);
    qkv_tensor *memory = qkv_seq2seq_encode(m, r, b->src, b->src_valid, 1, b->Ts);
    if (qkv_seq2seq_decode(m, r, memory, b->src_valid, dec_in, 1, Tt, w))
        result = w[layer];
    qkv_set_grad_enabled(was);
done:
    qkv_seq2seq_batch_free(b);
    if (!result)
        qkv__fail_in(fn);
    return result;
}

static int attn_svg(const char *path, const qkv_tensor *weights, const qkv_attn_svg_spec *spec)
{
    char shape[64];
    if (weights->ndim != 4 || weights->shape[0] != 1)
        return qkv_set_error("attn svg %s: weights %s are not the (1,H,Tq,Tk) of one sequence",
                             path, qkv_shape_str(weights, shape, sizeof shape));
    int H = weights->shape[1], Tq = weights->shape[2], Tk = weights->shape[3];
    if (!spec->average && (spec->head < -1 || spec->head >= H))
        return qkv_set_error("attn svg %s: head %d does not exist; there are heads 0 to %d", path,
                             spec->head, H - 1);
    int first = spec->average || spec->head < 0 ? 0 : spec->head;
    int panels = spec->average || spec->head >= 0 ? 1 : H;
    size_t cells = (size_t)Tq * Tk;
    qkv_real *values = qkv_alloc((size_t)panels * cells * sizeof *values);
    if (!values)
        return -1;
    double top = 0; /* the colour scale runs from 0 to the largest weight drawn */
    for (int p = 0; p < panels; p++)
        for (size_t i = 0; i < cells; i++) {
            int q = (int)(i / (size_t)Tk), k = (int)(i % (size_t)Tk);
            double sum = 0;
            int n = spec->average ? H : 1;
            for (int h = 0; h < n; h++)
                sum += weights->data[(size_t)(first + p + h) * cells + i];
            /* A causal query q sees keys up to q + (Tk - Tq); the others are drawn blank. */
            bool masked = spec->causal && k > q + (Tk - Tq);
            values[(size_t)p * cells + i] = masked ? (qkv_real)NAN : (qkv_real)(sum / n);
            top = !masked && sum / n > top ? sum / n : top;
        }
    char title[32];
    const char *one_title[1] = {title};
    if (spec->average)
        snprintf(title, sizeof title, "mean of %d heads", H);
    else
        snprintf(title, sizeof title, "head %d", first);
    qkv_svg_heatmap_spec hm = {
        .title = spec->title, .panels = panels, .rows = Tq, .cols = Tk, .values = values,
        .row_labels = spec->row_labels, .col_labels = spec->col_labels,
        .rows_name = spec->rows_name, .cols_name = spec->cols_name,
        .panel_titles = panels == 1 ? one_title : NULL, .vmin = 0, .vmax = top,
    };
    int rc = qkv_svg_heatmap(path, &hm);
    qkv_free(values);
    return rc;
}

int qkv_attn_svg(const char *path, const qkv_tensor *weights, const qkv_attn_svg_spec *spec)
{
    const char *fn = "qkv_attn_svg";
    if (qkv__null(fn, "path", path) || qkv__check_input(fn, "weights", weights) < 0 ||
        qkv__null(fn, "spec", spec))
        return -1;
    return attn_svg(path, weights, spec) < 0 ? qkv__fail_in(fn) : 0;
}
