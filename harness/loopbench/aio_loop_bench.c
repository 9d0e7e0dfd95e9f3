/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * aio_loop_bench: QEMU's event loop on the wall clock, without a guest.
 *
 * A producer thread posts events to one polled handler of an AioContext at
 * times drawn from a gap pattern, fixed before the run (open loop: the loop
 * does not move them).  It posts the way a virtqueue or a completion ring
 * gets work: it publishes the event in memory, and writes the handler's
 * eventfd only while the loop is not polling for it; io_poll_begin() and
 * io_poll_end() switch that, as virtio switches the guest's notifications
 * off and on.  The main thread runs aio_poll(ctx, true) until it has
 * handled every event, and measures over the events after the warm-up:
 *
 *   its CPU time (CLOCK_THREAD_CPUTIME_ID) per event, and the producer's
 *     time in the fd writes that notify it (the notifier's share of a
 *     wakeup's price: a spinning producer's time is its CPU time),
 *   its voluntary context switches per event (getrusage(RUSAGE_THREAD)):
 *     the blocking waits that an event or a timer ended,
 *   each event's latency, from its posting to its handler,
 *   how many events polling caught and how many came through the fd.
 *
 * Built by ./apw loopbench against a build folder's libqemuutil.a, with
 * harness/callgrind/build.py, once per build.
 *
 * usage: aio_loop_bench PATTERN N [--warmup=N] [--max-ns=NS] [--grow=G]
 *                       [--shrink=S] [--weight=W] [--fdmon=default|poll]
 *                       [--seed=S] [--cpu-loop=C] [--cpu-producer=C]
 * PATTERN:
 *   fixed:G          every gap G ns
 *   exp:M            exponential gaps of mean M ns (Poisson arrivals)
 *   bursts:G,K,OFF   K events G ns apart, then a gap of OFF ns, and again
 * N events are posted, the first --warmup (default N / 10) are not measured.
 * --max-ns is poll-max-ns (default 32768, an IOThread's; 0: no polling).
 * --grow and --shrink are poll-grow and poll-shrink (default 0, as an
 * IOThread has them).
 * --fdmon=poll drops io_uring for fdmon-poll (ppoll()).  With io_uring an
 * event that came through the fd re-arms its POLL_ADD, which keeps the next
 * aio_poll() from polling (need_wait()); as every event that polling did
 * not catch comes through the fd here, the loop then never polls again.
 * The threads are pinned to CPUs 1 and 0 where there are two.
 *
 * Prints one line of key=value facts on stdout.  Exits with 3 when it
 * measured nothing: one aio_poll() handled the warm-up's last event and
 * every event after it (the producer fell behind its schedule).
 */
#include "qemu/osdep.h"
#include "block/aio.h"
#include "qapi/error.h"
#include "qemu/atomic.h"
#include "qemu/event_notifier.h"
#include "qemu/processor.h"
#include "qemu/timer.h"
#include "util/aio-posix.h"
#include "../lib/apw_aio.h"
#include <pthread.h>
#include <math.h>
#include <sys/resource.h>

#define PROG "aio_loop_bench"
/* The value of option NAME=VALUE in argv[i]: apw_opt_num() */
#define OPT(name) apw_opt_num(PROG, argv[i], name)

/*
 * A producer that sleeps wakes up this early and spins to its time.  A
 * sleep on this kind of machine may end 50-100 us late: gaps under 1 ms
 * are spun in full, on the producer's own CPU.
 */
#define SLEEP_SLACK_NS (1000 * 1000)

static struct {
    AioContext *ctx;
    EventNotifier e;
    long n;
    int64_t *gap;           /* gap before each event */
    int64_t *post;          /* when each event was posted */
    int64_t *lat;           /* posting to handler, per event */
    int64_t late_ns;        /* producer: posting behind schedule, summed
                               over the measured events */
    int64_t notify_ns;      /* producer: time in its fd writes, measured */
    long warmup;
    unsigned long posted;   /* events posted; the producer writes it */
    unsigned long handled;  /* events handled; the loop writes it */
    bool polling;           /* the loop polls: no need to write the fd */
    unsigned long by_poll, by_fd, empty_fd, fd_writes;
    int cpu_producer;
} b;

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long thread_vcsw(void)
{
    struct rusage ru;

    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw;
}

static void pin(int cpu)
{
    cpu_set_t set;

    if (cpu < 0) {
        return;
    }
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Handle every event posted so far */
static void handle(void)
{
    unsigned long p = qatomic_load_acquire(&b.posted);
    int64_t now = get_clock();

    while (b.handled < p) {
        b.lat[b.handled] = now - b.post[b.handled];
        b.handled++;
    }
}

static bool io_poll(void *opaque)
{
    return qatomic_read(&b.posted) != b.handled;
}

static void io_poll_ready(EventNotifier *n)
{
    b.by_poll++;
    handle();
}

static void io_read(EventNotifier *n)
{
    event_notifier_test_and_clear(n);
    if (qatomic_read(&b.posted) != b.handled) {
        b.by_fd++;
        handle();
    } else {
        b.empty_fd++;   /* polling took the event that wrote the fd */
    }
}

static void io_poll_begin(EventNotifier *n)
{
    qatomic_set(&b.polling, true);
}

static void io_poll_end(EventNotifier *n)
{
    /*
     * Pairs with the producer's smp_mb(): either it sees polling off and
     * writes the fd, or aio_poll()'s last io_poll() after this sees the
     * event.
     */
    qatomic_set(&b.polling, false);
    smp_mb();
}

static void wait_until(int64_t t)
{
    int64_t now = get_clock();

    if (t - now > SLEEP_SLACK_NS) {
        int64_t s = t - SLEEP_SLACK_NS;
        struct timespec ts = { s / 1000000000LL, s % 1000000000LL };

        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    while (get_clock() < t) {
        cpu_relax();
    }
}

static void *producer(void *opaque)
{
    int64_t t = get_clock() + 1000 * 1000;
    long k;

    pin(b.cpu_producer);
    for (k = 0; k < b.n; k++) {
        int64_t now;

        t += b.gap[k];
        wait_until(t);
        now = get_clock();
        if (k >= b.warmup) {
            b.late_ns += now - t;
        }
        b.post[k] = now;
        qatomic_store_release(&b.posted, k + 1);
        smp_mb();
        if (!qatomic_read(&b.polling)) {
            int64_t t1 = get_clock();

            event_notifier_set(&b.e);
            if (k >= b.warmup) {
                b.notify_ns += get_clock() - t1;
            }
            b.fd_writes++;
        }
    }
    return NULL;
}

/* xorshift64*: the same gaps for the same seed on every build */
static uint64_t rng_state;

static double rng_uniform(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    /* the top 53 bits, over 2^53 */
    return ((rng_state * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
}

static bool make_gaps(const char *pattern)
{
    long g, k, off, i;
    double m;

    if (sscanf(pattern, "fixed:%ld", &g) == 1 && g > 0) {
        for (i = 0; i < b.n; i++) {
            b.gap[i] = g;
        }
    } else if (sscanf(pattern, "exp:%lf", &m) == 1 && m > 0) {
        for (i = 0; i < b.n; i++) {
            b.gap[i] = (int64_t)(-m * log(1.0 - rng_uniform()));
        }
    } else if (sscanf(pattern, "bursts:%ld,%ld,%ld", &g, &k, &off) == 3 &&
               g > 0 && k > 0 && off > 0) {
        for (i = 0; i < b.n; i++) {
            b.gap[i] = i % k ? g : off;
        }
    } else {
        return false;
    }
    return true;
}

static int cmp_i64(const void *a, const void *c)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)c;

    return x < y ? -1 : x > y;
}

static void usage(void)
{
    fprintf(stderr, "usage: aio_loop_bench fixed:G|exp:M|bursts:G,K,OFF N "
            "[--warmup=N] [--max-ns=NS] [--grow=G] [--shrink=S] "
            "[--weight=W] [--fdmon=default|poll] [--seed=S] [--cpu-loop=C] "
            "[--cpu-producer=C]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    ApwPollOpts o = { .warmup = -1, .max_ns = 32768 };
    long seed = 1, i, v, m;
    int cpu_loop = -1, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    bool started = false;
    int64_t wall0 = 0, cpu0 = 0, wall, cpu, *sorted;
    long vcsw0 = 0, vcsw;
    unsigned long poll0 = 0, fd0 = 0, empty0 = 0, writes0 = 0;
    double lat_sum = 0;
    pthread_t th;

    if (argc < 3) {
        usage();
    }
    b.n = atol(argv[2]);
    if (b.n <= 1) {
        usage();
    }
    b.cpu_producer = -1;
    if (ncpu >= 2) {
        cpu_loop = 1;
        b.cpu_producer = 0;
    }
    for (i = 3; i < argc; i++) {
        if (apw_poll_opt(PROG, argv[i], &o)) {
            continue;
        } else if ((v = OPT("--seed")) != LONG_MIN) {
            seed = v;
        } else if ((v = OPT("--cpu-loop")) != LONG_MIN) {
            cpu_loop = v;
        } else if ((v = OPT("--cpu-producer")) != LONG_MIN) {
            b.cpu_producer = v;
        } else {
            usage();
        }
    }
    if (o.warmup < 0) {
        o.warmup = b.n / 10;
    }
    if (o.warmup >= b.n) {
        usage();
    }
    b.warmup = o.warmup;
    rng_state = 0x9E3779B97F4A7C15ULL ^ (uint64_t)seed;
    b.gap = g_new(int64_t, b.n);
    b.post = g_new0(int64_t, b.n);
    b.lat = g_new0(int64_t, b.n);
    if (!make_gaps(argv[1])) {
        usage();
    }

    pin(cpu_loop);
    b.ctx = apw_aio_context(PROG, &o);
    event_notifier_init(&b.e, 0);
    aio_set_event_notifier(b.ctx, &b.e, io_read, io_poll, io_poll_ready);
    aio_set_event_notifier_poll(b.ctx, &b.e, io_poll_begin, io_poll_end);
    while (aio_poll(b.ctx, false)) {
        /* the aio_notify() of aio_context_set_poll_params() */
    }

    pthread_create(&th, NULL, producer, NULL);
    while (b.handled < b.n) {
        if (!started && b.handled >= o.warmup) {
            started = true;
            wall0 = get_clock();
            cpu0 = thread_cpu_ns();
            vcsw0 = thread_vcsw();
            poll0 = b.by_poll;
            fd0 = b.by_fd;
            empty0 = b.empty_fd;
            writes0 = qatomic_read(&b.fd_writes);
        }
        aio_poll(b.ctx, true);
    }
    cpu = thread_cpu_ns() - cpu0;
    vcsw = thread_vcsw() - vcsw0;
    wall = get_clock() - wall0;
    pthread_join(th, NULL);
    if (!started) {
        /* one aio_poll() handled the warm-up's last event and the run's */
        fprintf(stderr, PROG ": nothing measured: the loop handled every "
                "event after the warm-up at once (the producer fell behind "
                "its schedule: %.1f ns late per event)\n",
                (double)b.late_ns / (b.n - o.warmup));
        return 3;
    }

    /* The events handled after the measurement started */
    m = b.n - o.warmup;
    sorted = g_new(int64_t, m);
    for (i = 0; i < m; i++) {
        sorted[i] = b.lat[o.warmup + i];
        lat_sum += sorted[i];
    }
    qsort(sorted, m, sizeof(*sorted), cmp_i64);

    printf("pattern=%s events=%ld warmup=%ld max_ns=%ld weight=%ld "
           "fdmon=%s cpu_ns_per_event=%.1f notify_ns_per_event=%.1f "
           "vcsw_per_event=%.4f "
           "lat_mean_ns=%.1f lat_p50_ns=%" PRId64 " lat_p99_ns=%" PRId64 " "
           "by_poll=%lu by_fd=%lu empty_fd=%lu fd_writes=%lu "
           "wall_ns_per_event=%.1f producer_late_ns=%.1f\n",
           argv[1], m, o.warmup, o.max_ns, o.weight,
           b.ctx->fdmon_ops == &fdmon_poll_ops ? "poll" : "io_uring",
           (double)cpu / m, (double)b.notify_ns / m, (double)vcsw / m,
           lat_sum / m,
           sorted[m / 2], sorted[m * 99 / 100],
           b.by_poll - poll0, b.by_fd - fd0, b.empty_fd - empty0,
           b.fd_writes - writes0, (double)wall / m,
           (double)b.late_ns / m);

    aio_set_event_notifier(b.ctx, &b.e, NULL, NULL, NULL);
    event_notifier_cleanup(&b.e);
    aio_context_unref(b.ctx);
    g_free(sorted);
    g_free(b.gap);
    g_free(b.post);
    g_free(b.lat);
    return 0;
}
