/* The qkv program's runs stopped and continued: Ctrl-C saves a checkpoint
 * that resumes exactly where the run stopped (qkv train and qkv s2s train);
 * --grad-accum is a larger batch; a --time budget ends on time with its
 * schedule done; a diverging run stops, naming the step, and keeps a loadable
 * checkpoint. Every case runs $QKV_TEST_BUILD/qkv in a temporary directory
 * (cli_suite.h). */
#include <math.h>
#include <signal.h>
#include <stdlib.h>

#include "cli_suite.h"
#include "testing.h"

/* Ctrl-C stops after the current step, saves, says how to resume and exits
 * 130; resuming with the printed command ends in the very same checkpoint,
 * byte for byte, as a run that was never interrupted. */
START_TEST(test_sigint_saves_and_resume_continues_exactly)
{
    const char *text = suite_text;
#define RUN_FLAGS "--data", text, TINY, "--iters", "400", "--eval-every", "200", "--log-every", "1"
    qkv_cli_result r = RUN("train", RUN_FLAGS, "--out", "full.ckpt");
    EXPECT(r, 0, "");
    qkv_cli_result_free(&r);

    qkv_child run = qkv_cli_start_piped(&suite_cli, NULL, (const char *const[]){"train", RUN_FLAGS,
                                        "--out", "run.ckpt", NULL});
    /* Read stdout until the first progress line, then interrupt. A progress
     * line every step fills the one-page pipe within some 50 steps, and the
     * program then waits for this reader: it cannot finish the run first. */
    bool seen = qkv_child_read_until(&run, "\nstep ", -1);
    ck_assert_int_eq(kill(run.pid, SIGINT), 0);
    r = qkv_cli_finish(&suite_cli, &run);
    ck_assert_msg(seen, "no progress line:\n%s", r.out);
    EXPECT(r, 130, "qkv: stopping: the run saves and ends after this step");
    long step = -1;
    const char *at = strstr(r.out, "interrupted at step ");
    ck_assert_msg(at && sscanf(at, "interrupted at step %ld", &step) == 1, "stdout:\n%s", r.out);
    ck_assert_msg(step >= 1 && step < 400, "interrupted at step %ld", step);
    ck_assert_ptr_nonnull(strstr(at, ": saved run.ckpt\n"));
    char resume_hint[512];
    snprintf(resume_hint, sizeof resume_hint,
             "resume with: qkv train --resume run.ckpt --data %s\n", text);
    ck_assert_msg(strstr(at, resume_hint), "no resume hint in:\n%s", at);
    ck_assert_ptr_null(strstr(r.out, "done:"));
    qkv_cli_result_free(&r);

    qkv_tokenizer vocab;
    qkv_checkpoint *ck = qkv_checkpoint_open(work_file("run.ckpt"), "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->step, step);
    qkv_checkpoint_close(ck);

    /* The printed command, with the settings a run does not save: how often
     * it evaluates (which draws evaluation batches) and logs, and its thread count. */
    r = RUN("train", "--resume", "run.ckpt", "--data", text, "--eval-every", "200", "--log-every",
            "1", "--threads", "1");
    EXPECT(r, 0, "");
    ck_assert_ptr_nonnull(strstr(r.out, "(resumed)"));
    ck_assert_ptr_nonnull(strstr(r.out, "done: "));
    qkv_cli_result_free(&r);
    qkv_test_assert_same_files(work_file("full.ckpt"), work_file("run.ckpt"));
    /* The loss log continues the saved run's: the same rows as the uninterrupted run's. */
    qkv_test_assert_same_files(work_file("full.ckpt.csv"), work_file("run.ckpt.csv"));
    qkv_gpt *m = qkv_gpt_load(work_file("run.ckpt"), &vocab);
    ck_assert_qkv(m);
    qkv_gpt_free(m);
#undef RUN_FLAGS
}
END_TEST

/* The `[ms]s` after "done: N steps in " in a run's output, or -1. */
static double done_seconds(const char *out)
{
    const char *at = strstr(out, "done: ");
    long steps;
    double secs;
    return at && sscanf(at, "done: %ld steps in %lfs", &steps, &secs) == 2 ? secs : -1;
}

/* --time: the run ends on its budget, evaluations and the final save
 * included, with the schedule ended (the last step at min_lr, the saved run
 * as long as the steps it took); resumed with --time it trains that much more. */
START_TEST(test_time_budget_ends_on_time_with_the_schedule_done)
{
    const double budget = 3;
    qkv_cli_result r = RUN("train", "--data", suite_text, TINY, "--time", "3s", "--eval-every", "300",
                   "--log-every", "1", "--warmup", "5", "--min-lr", "2e-05", "--out", "t.ckpt");
    EXPECT(r, 0, "");
    double secs = done_seconds(r.out);
    ck_assert_msg(secs > budget - 0.5 && secs < budget + 0.5, "a %gs budget took %gs:\n%s",
                  budget, secs, r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "elapsed "));
    /* Its last evaluation read the whole validation split, inside the budget. */
    ck_assert_ptr_nonnull(strstr(r.out, "val loss "));
    ck_assert_msg(strstr(r.out, " +- ") && strstr(r.out, "(the whole split)"), "%s", r.out);
    /* The last progress line's lr is the schedule's floor. */
    const char *last = NULL;
    for (const char *p = r.out; (p = strstr(p, "\nstep ")); p++)
        last = p + 1;
    ck_assert_ptr_nonnull(last);
    long step, total;
    double loss, lr;
    ck_assert_int_eq(sscanf(last, "step %ld/%ld loss %lf lr %lf", &step, &total, &loss, &lr), 4);
    ck_assert_int_eq(step, total);
    ck_assert_msg(step > 100, "only %ld steps in %gs", step, budget);
    ck_assert_msg(fabs(lr - 2e-05) < 1e-07, "the lr ended at %g, not at --min-lr 2e-05", lr);
    qkv_cli_result_free(&r);
    qkv_checkpoint *ck = qkv_checkpoint_open(work_file("t.ckpt"), "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->step, step);
    qkv_train_config tc;
    ck_assert_qkv(qkv_training_config_load(&tc, ck, QKV_GPT_CONFIG_BYTES) == 0 ? ck : NULL);
    ck_assert_int_eq(tc.iters, step); /* the saved schedule ends where the run did */
    qkv_checkpoint_close(ck);

    r = RUN("train", "--resume", "t.ckpt", "--data", suite_text, "--time", "1", "--threads", "1");
    EXPECT(r, 0, "");
    ck_assert_ptr_nonnull(strstr(r.out, "(resumed)"));
    secs = done_seconds(r.out);
    ck_assert_msg(secs > 0.5 && secs < 1.5, "a 1s resumed budget took %gs:\n%s", secs, r.out);
    qkv_cli_result_free(&r);
    ck_assert_qkv(ck = qkv_checkpoint_open(work_file("t.ckpt"), "gpt"));
    ck_assert_int_gt(ck->step, step);
    qkv_checkpoint_close(ck);
}
END_TEST

/* qkv s2s train --resume: 8 steps straight, or 4, stop, resume, 4 more: the
 * same checkpoint, byte for byte. */
START_TEST(test_s2s_resume_continues_exactly)
{
#define S2S_FLAGS "--layers", "1", "--heads", "2", "--embd", "16", "--batch", "4", \
                  "--eval-iters", "1", "--eval-every", "4", "--dropout", "0.1", "--threads", "1"
    qkv_cli_result r = RUN("s2s", "train", S2S_FLAGS, "--steps", "8", "--out", "full.ckpt");
    EXPECT(r, 0, "");
    qkv_cli_result_free(&r);
    r = RUN("s2s", "train", S2S_FLAGS, "--steps", "4", "--out", "run.ckpt");
    EXPECT(r, 0, "");
    qkv_cli_result_free(&r);
    r = RUN("s2s", "train", "--resume", "run.ckpt", "--steps", "8", "--eval-every", "4",
            "--threads", "1");
    EXPECT(r, 0, "");
    ck_assert_ptr_nonnull(strstr(r.out, "(resumed)"));
    ck_assert_ptr_nonnull(strstr(r.out, "done: 4 steps"));
    qkv_cli_result_free(&r);
    qkv_test_assert_same_files(work_file("full.ckpt"), work_file("run.ckpt"));
    r = RUN("s2s", "eval", "--ckpt", "run.ckpt", "--n", "4", "--threads", "1");
    EXPECT(r, 0, "");
    qkv_cli_result_free(&r);
#undef S2S_FLAGS
}
END_TEST

/* The losses on the progress lines of r's stdout, n of them, into loss. */
static void step_losses(const qkv_cli_result *r, double *loss, int n)
{
    const char *at = r->out;
    for (int i = 0; i < n; i++) {
        ck_assert_msg((at = strstr(at, "  loss ")) && sscanf(at, "  loss %lf", &loss[i]) == 1,
                      "progress line %d missing in:\n%s", i + 1, r->out);
        at++;
    }
}

/* --grad-accum K with --batch B is a step of K·B sequences: the same
 * batches, the same losses (to the 4 digits printed), and the plan says
 * so; a resumed run keeps it and cannot change it. */
START_TEST(test_grad_accum_is_a_larger_batch_in_the_memory_of_one)
{
#define SMALL "--data", suite_text, "--layers", "1", "--heads", "2", "--embd", "16", "--block", "16", \
              "--eval-iters", "1", "--threads", "1", "--log-every", "1", "--eval-every", "3"
    qkv_cli_result whole = RUN("train", SMALL, "--batch", "8", "--iters", "3", "--out", "whole.ckpt");
    EXPECT(whole, 0, "");
    qkv_cli_result micro = RUN("train", SMALL, "--batch", "4", "--grad-accum", "2", "--iters", "3",
                       "--out", "micro.ckpt");
    EXPECT(micro, 0, "");
    ck_assert_msg(strstr(micro.out, "3 steps of 2 micro-batches of 4 x 16 tokens"), "plan:\n%s",
                  micro.out);
    double a[3], b[3];
    step_losses(&whole, a, 3);
    step_losses(&micro, b, 3);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(fabs(a[i] - b[i]) < 2e-4, "step %d: loss %.4f with --batch 8, %.4f with "
                      "--batch 4 --grad-accum 2", i + 1, a[i], b[i]);
    qkv_cli_result_free(&whole);
    qkv_cli_result_free(&micro);
    qkv_cli_result resumed = RUN("train", "--resume", "micro.ckpt", "--data", suite_text, "--iters", "4");
    EXPECT(resumed, 0, "");
    ck_assert_msg(strstr(resumed.out, "2 micro-batches of 4 x 16 tokens"), "plan:\n%s",
                  resumed.out);
    qkv_cli_result_free(&resumed);
    qkv_cli_result changed = RUN("train", "--resume", "micro.ckpt", "--data", suite_text, "--grad-accum",
                         "3");
    EXPECT(changed, 2, "--grad-accum cannot change a resumed run");
    qkv_cli_result_free(&changed);
#undef SMALL
}
END_TEST

/* A learning rate that blows the weights up: the run stops with a message
 * naming the step, exits 1, and the checkpoint left behind loads and holds
 * only finite weights. */
START_TEST(test_diverging_run_stops_and_keeps_a_good_checkpoint)
{
    qkv_cli_result r = RUN("train", "--data", suite_text, TINY, "--iters", "200",
                   "--eval-every", "2", "--lr", "10", "--min-lr", "1", "--warmup", "0",
                   "--weight-decay", "10", "--out", "div.ckpt");
    EXPECT(r, 1, "qkv train: step ", "stopping before it reaches the weights");
    ck_assert_ptr_null(strstr(r.out, "done:"));
    ck_assert_msg(!strstr(r.err, "nan"), "printf's nan in: %s", r.err); /* "NaN (not a number)" */
    qkv_cli_result_free(&r);
    qkv_tokenizer vocab;
    qkv_gpt *m = qkv_gpt_load(work_file("div.ckpt"), &vocab);
    ck_assert_qkv(m);
    for (size_t i = 0; i < m->params->total; i++)
        ck_assert_msg(isfinite(m->params->data[i]), "value %zu is %g", i,
                      (double)m->params->data[i]);
    qkv_gpt_free(m);
}
END_TEST

static Suite *cli_resume_suite(void)
{
    Suite *s = suite_create("cli_resume");
    TCase *tc = cli_suite_tcase("runs");
    tcase_add_test(tc, test_sigint_saves_and_resume_continues_exactly);
    tcase_add_test(tc, test_grad_accum_is_a_larger_batch_in_the_memory_of_one);
    tcase_add_test(tc, test_diverging_run_stops_and_keeps_a_good_checkpoint);
    tcase_add_test(tc, test_time_budget_ends_on_time_with_the_schedule_done);
    tcase_add_test(tc, test_s2s_resume_continues_exactly);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(cli_resume_suite)
