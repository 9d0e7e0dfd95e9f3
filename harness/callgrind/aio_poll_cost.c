/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * aio_poll_cost: drive aio_poll() through one fixed scenario, so that
 * callgrind can count the instructions of one aio_poll() call.
 *
 * Built by ./apw callgrind against a QEMU build folder's libqemuutil.a, once
 * for the unpatched base and once for the series.  Meant to run under
 *
 *   valgrind --tool=callgrind --toggle-collect=aio_poll aio_poll_cost ...
 *
 * Each iteration makes exactly one aio_poll(ctx, true) call that returns
 * after one event of one handler.  The warm-up iterations bring the handler
 * into the poll list and the polling policy to its steady state; then the
 * program zeroes callgrind's counters, runs the measured iterations and
 * dumps the counters, so that the dump holds the measured aio_poll() calls
 * and nothing else.
 *
 * Scenarios:
 *   nopoll     poll-max-ns=0; the event comes through the fd (set before
 *              each aio_poll()).
 *   poll-hit   polling enabled; io_poll() reports the event on its first
 *              call, io_poll_ready() consumes it.  The fd is not set.
 *   poll-miss  polling enabled; io_poll() never sees the event, which comes
 *              through the fd (set before each aio_poll()).  With fdmon-poll
 *              aio_poll() first spins for the policy's polling time.
 *
 * Clock: QEMU_CLOCK_REALTIME reads clock_gettime(CLOCK_MONOTONIC).  When
 * built with -DAPW_FAKE_CLOCK this file defines clock_gettime() itself, and
 * every CLOCK_MONOTONIC read advances a fake clock by --step ns.  That makes
 * the policy's decisions, and so the instruction counts, independent of how
 * slowly valgrind runs: the polled time then counts clock reads, not real
 * time.
 *
 * Options:
 *   --warmup=N      warm-up iterations (default 1000)
 *   --max-ns=NS     poll-max-ns for the polling scenarios (default 32768)
 *   --grow=G --shrink=S --weight=W   the other poll parameters (default 0,
 *                   as an IOThread has them; --weight needs the series)
 *   --fdmon=default|poll   default: what aio_context_new() chose (io_uring
 *                   where the kernel allows it); poll: drop io_uring and
 *                   use fdmon-poll
 *   --step=NS       fake clock step per read (default 1000)
 *   --idle-handlers=K  K more polled handlers that fire once, in the setup,
 *                   so that they join the poll list, and never again: their
 *                   io_poll() always reports nothing.  For the cost of
 *                   idle polled handlers per aio_poll() (default 0).
 *   --fd-fallback   poll-hit sets the fd too, so that an aio_poll() that
 *                   does not poll still gets the event (through io_read(),
 *                   which the counts then show).  With fdmon-poll a poll
 *                   hit skips ppoll(), so this changes no hit; with io_uring
 *                   a set fd stops polling, so don't use it there.
 *
 * Prints one line of key=value facts on stdout; exits non-zero when an
 * iteration did not go the way the scenario says.
 */
#include "qemu/osdep.h"
#include "block/aio.h"
#include "qapi/error.h"
#include "qemu/event_notifier.h"
#include "util/aio-posix.h"
#include "../lib/apw_aio.h"
#include <pthread.h>
#include <valgrind/callgrind.h>

#define PROG "aio_poll_cost"
/* The value of option NAME=VALUE in argv[i]: apw_opt_num() */
#define OPT(name) apw_opt_num(PROG, argv[i], name)

#ifdef APW_FAKE_CLOCK
#include <sys/syscall.h>

static int64_t fake_now = 1000 * 1000 * 1000;
static int64_t fake_step = 1000;
static unsigned long fake_reads;

/*
 * Overrides glibc's for this program and the libraries it loads; only
 * CLOCK_MONOTONIC, the clock behind QEMU_CLOCK_REALTIME, is faked.
 */
int clock_gettime(clockid_t clk, struct timespec *ts)
{
    if (clk == CLOCK_MONOTONIC) {
        int64_t t = fake_now;

        fake_now += fake_step;
        fake_reads++;
        ts->tv_sec = t / 1000000000;
        ts->tv_nsec = t % 1000000000;
        return 0;
    }
    return syscall(SYS_clock_gettime, clk, ts);
}
#endif

enum scenario { NOPOLL, POLL_HIT, POLL_MISS };

static struct {
    AioContext *ctx;
    EventNotifier e;
    bool pending;               /* the event io_poll() looks for */
    unsigned long io_poll_calls;
    unsigned long io_read_calls;
    unsigned long poll_ready_calls;
    bool fd_fallback;           /* poll-hit sets the fd too */
    volatile unsigned long iter;
    volatile bool in_aio_poll;
    volatile bool stalled;      /* the watchdog had to wake aio_poll() */
    volatile bool done;
} t;

/* The idle handlers of --idle-handlers */
static EventNotifier *idle_e;
static long n_idle;

static void idle_read(EventNotifier *n)
{
    event_notifier_test_and_clear(n);
}

static bool idle_poll(void *opaque)
{
    t.io_poll_calls++;
    return false;
}

static void idle_poll_ready(EventNotifier *n)
{
    abort();    /* idle_poll() never reports an event */
}

static void io_read(EventNotifier *n)
{
    t.io_read_calls++;
    event_notifier_test_and_clear(n);
    t.pending = false;
}

static bool io_poll(void *opaque)
{
    t.io_poll_calls++;
    return t.pending;
}

static void io_poll_ready(EventNotifier *n)
{
    t.poll_ready_calls++;
    t.pending = false;
    if (t.fd_fallback) {
        event_notifier_test_and_clear(n);
    }
}

/*
 * poll-hit does not set the fd (unless --fd-fallback), so an aio_poll() that
 * does not poll blocks for good.  Wake it through the fd then, so that the
 * program can stop and say that the scenario did not hold.
 */
static void *watchdog(void *opaque)
{
    unsigned long last = ~0UL;

    while (!t.done) {
        g_usleep(500 * 1000);
        if (t.in_aio_poll && t.iter == last) {
            t.stalled = true;
            event_notifier_set(&t.e);
        }
        last = t.iter;
    }
    return NULL;
}

static bool one_iteration(enum scenario sc, bool first)
{
    bool progress;

    switch (sc) {
    case NOPOLL:
    case POLL_MISS:
        event_notifier_set(&t.e);
        break;
    case POLL_HIT:
        t.pending = true;
        if (first || t.fd_fallback) {
            /* The handler enters the poll list when it first fires */
            event_notifier_set(&t.e);
        }
        break;
    }
    t.in_aio_poll = true;
    progress = aio_poll(t.ctx, true);
    t.in_aio_poll = false;
    t.iter++;
    return progress;
}

static void usage(void)
{
    fprintf(stderr, "usage: aio_poll_cost nopoll|poll-hit|poll-miss N "
            "[--warmup=N] [--max-ns=NS] [--grow=G] [--shrink=S] "
            "[--weight=W] [--fdmon=default|poll] [--step=NS] "
            "[--idle-handlers=K]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    enum scenario sc;
    ApwPollOpts o = { .warmup = 1000, .max_ns = 32768 };
    long n;
    unsigned long read0, ready0, iopoll0, bad = 0;
#ifdef APW_FAKE_CLOCK
    unsigned long reads0;
#endif
    const char *fdmon, *phase;
    pthread_t wd;
    long i, v;

    if (argc < 3) {
        usage();
    }
    if (!strcmp(argv[1], "nopoll")) {
        sc = NOPOLL;
    } else if (!strcmp(argv[1], "poll-hit")) {
        sc = POLL_HIT;
    } else if (!strcmp(argv[1], "poll-miss")) {
        sc = POLL_MISS;
    } else {
        usage();
    }
    n = atol(argv[2]);
    if (n <= 0) {
        usage();
    }
    for (i = 3; i < argc; i++) {
        if (apw_poll_opt(PROG, argv[i], &o)) {
            continue;
        } else if ((v = OPT("--idle-handlers")) != LONG_MIN) {
            n_idle = v;
        } else if ((v = OPT("--step")) != LONG_MIN) {
#ifdef APW_FAKE_CLOCK
            fake_step = v;
#endif
        } else if (!strcmp(argv[i], "--fd-fallback")) {
            t.fd_fallback = true;
        } else {
            usage();
        }
    }
    if (sc == NOPOLL) {
        o.max_ns = 0;
    }

    t.ctx = apw_aio_context(PROG, &o);
    fdmon = t.ctx->fdmon_ops == &fdmon_poll_ops ? "poll" : "io_uring";

    idle_e = g_new0(EventNotifier, n_idle ? n_idle : 1);
    for (i = 0; i < n_idle; i++) {
        event_notifier_init(&idle_e[i], 0);
        aio_set_event_notifier(t.ctx, &idle_e[i], idle_read, idle_poll,
                               idle_poll_ready);
        event_notifier_set(&idle_e[i]);     /* fire once: join the poll list */
    }
    event_notifier_init(&t.e, 0);
    aio_set_event_notifier(t.ctx, &t.e, io_read, io_poll, io_poll_ready);

    /* Consume the aio_notify() of aio_context_set_poll_params() */
    while (aio_poll(t.ctx, false)) {
        /* nothing */
    }

    pthread_create(&wd, NULL, watchdog, NULL);

    /*
     * The first event comes through the fd and puts the handler in the poll
     * list.  With io_uring the fd's POLL_ADD is then re-armed, and a pending
     * sqe keeps the next aio_poll() from polling: submit it without blocking.
     */
    phase = "setup";
    one_iteration(sc, true);
    while (aio_poll(t.ctx, false)) {
        /* nothing */
    }

    if (!t.stalled) {
        phase = "warm-up";
    }
    for (i = 0; i < o.warmup && !t.stalled; i++) {
        one_iteration(sc, false);
    }

    read0 = t.io_read_calls;
    ready0 = t.poll_ready_calls;
    iopoll0 = t.io_poll_calls;
#ifdef APW_FAKE_CLOCK
    reads0 = fake_reads;
#endif
    if (!t.stalled) {
        phase = "measured";
    }
    CALLGRIND_ZERO_STATS;
    for (i = 0; i < n && !t.stalled; i++) {
        unsigned long r = t.io_read_calls, p = t.poll_ready_calls;

        if (!one_iteration(sc, false)) {
            bad++;
        } else if (sc == POLL_HIT ? t.poll_ready_calls != p + 1 ||
                                    t.io_read_calls != r
                                  : t.io_read_calls != r + 1 ||
                                    t.poll_ready_calls != p) {
            bad++;
        }
    }
    CALLGRIND_DUMP_STATS_AT("measured");

    t.done = true;
    pthread_join(wd, NULL);

    if (t.stalled) {
        fprintf(stderr, "aio_poll_cost: aio_poll() call %lu (%s) blocked "
                "for good: the handler was not polled\n", t.iter + 1, phase);
    }
    printf("idle_handlers=%ld ", n_idle);
    printf("scenario=%s measured=%ld warmup=%ld fdmon=%s max_ns=%ld "
           "io_read=%lu poll_ready=%lu io_poll_per_iter=%.3f "
           "stalled=%d bad=%lu",
           argv[1], n, o.warmup, fdmon, o.max_ns,
           t.io_read_calls - read0, t.poll_ready_calls - ready0,
           (double)(t.io_poll_calls - iopoll0) / n, t.stalled, bad);
#ifdef APW_FAKE_CLOCK
    printf(" clock=fake step=%ld clock_reads_per_iter=%.3f",
           (long)fake_step, (double)(fake_reads - reads0) / n);
#else
    printf(" clock=real");
#endif
    printf("\n");

    aio_set_event_notifier(t.ctx, &t.e, NULL, NULL, NULL);
    event_notifier_cleanup(&t.e);
    for (i = 0; i < n_idle; i++) {
        aio_set_event_notifier(t.ctx, &idle_e[i], NULL, NULL, NULL);
        event_notifier_cleanup(&idle_e[i]);
    }
    g_free(idle_e);
    aio_context_unref(t.ctx);
    return bad || t.stalled ? 1 : 0;
}
