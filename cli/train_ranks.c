/* Data parallelism for the training loop (see train_ranks.h). */
#include "train_ranks.h"

#include "dist.h"
#include "output.h"
#include "signals.h"

/* This step's vote: cast yet, and whether a rank asked to stop. */
static bool voted, stop_voted;

/* The grad hook: vote, then sum the gradients and the loss over the ranks
 * and divide by their number, so each rank holds the mean over the whole
 * global batch (each computed the mean of an equal slice). */
static int sum_gradients(void *ud, qkv_params *p, double *loss)
{
    (void)ud;
    voted = true;
    double vote[3] = {0, cli_interrupted ? 1 : 0, *loss};
    if (dist_sum_doubles(vote, 3) < 0)
        return -1;
    if (vote[0] > 0)
        return qkv_set_error("another rank failed at this step (its message is above)");
    stop_voted = vote[1] > 0;
    if (dist_sum(p->grad, p->total) < 0)
        return -1;
    qkv_real inv = (qkv_real)1 / (qkv_real)dist_size();
    for (size_t i = 0; i < p->total; i++)
        p->grad[i] *= inv;
    *loss = vote[2] / dist_size();
    return 0;
}

int ranks_join(qkv_training *run)
{
    int n = dist_size(), r = dist_rank(), B = run->cfg.batch_size;
    if (n == 1)
        return 0;
    if (B % n)
        return qkv_set_error("--batch %d does not split evenly over %d ranks", B, n);
    run->batch_lo = r * (B / n);
    run->batch_hi = (r + 1) * (B / n);
    run->grad_hook = sum_gradients;
    return 0;
}

void ranks_step_begin(void) { voted = false; }

void ranks_step_failed(void)
{
    if (dist_size() > 1 && !voted) {
        double vote[3] = {1, 0, 0};
        dist_sum_doubles(vote, 3);
    }
}

bool ranks_stop(bool local) { return dist_size() > 1 && !dist_lost() ? stop_voted : local; }

bool ranks_lost(void) { return dist_lost(); }

bool ranks_any(bool failed) { return dist_max(failed) != 0; }

void ranks_mean(double *v, int n)
{
    if (dist_size() == 1)
        return;
    dist_sum_doubles(v, n);
    for (int i = 0; i < n; i++)
        v[i] /= dist_size();
}

int64_t ranks_longest(int64_t iters) { return dist_size() > 1 ? dist_max((int)iters) : iters; }

/* Whether a rank cut off from rank 0 has claimed the run's files (ranks_take_over). */
static bool took_over;

bool ranks_writer(void) { return dist_rank() == 0 || took_over; }

bool ranks_take_over(const char *cmd, const char *out)
{
    /* The claim takes OUT's lock at once or fails: while rank 0 lives, it holds it. */
    if (dist_lost() && dist_rank() != 0 && !took_over)
        took_over = cli_claim_outputs(cmd, out, false, out) == 0;
    return ranks_writer();
}
