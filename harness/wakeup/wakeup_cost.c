/*
 * wakeup_cost: the price of one blocking wakeup on this machine.
 *
 * A waiter thread waits for an eventfd that a notifier thread writes.  For
 * each fd monitoring backend that QEMU's event loop uses (ppoll, epoll,
 * io_uring), three kinds of wait are timed, each many times:
 *
 *   sleep  the waiter blocks before the write comes: a real wakeup;
 *   ready  the write came before the wait: the wait returns at once;
 *   spin   the waiter busy-polls a memory word that the notifier sets
 *          (what QEMU's polling does with a virtqueue or completion ring).
 *
 * Per wait, it measures the waiter's CPU time around the wait call
 * (CLOCK_THREAD_CPUTIME_ID, which excludes the time asleep), the notifier's
 * CPU time around its write, and the latency from just before the write to
 * just after the wait returns (CLOCK_MONOTONIC).  Then
 *
 *   wakeup CPU     = waiter(sleep) - waiter(ready) + notifier(sleep) - notifier(ready)
 *   wakeup latency = latency(sleep) - latency(spin)
 *
 * are what a blocking wakeup costs over catching the same event by polling.
 * The notifier waits DELAY_NS after the waiter has announced that it is about
 * to wait, so that the waiter is asleep when the write comes.
 *
 * Output: one CSV line per backend and kind with medians and means, and one
 * summary line per backend.  Usage: wakeup_cost [ITERATIONS] [DELAY_NS]
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

enum { B_PPOLL, B_EPOLL, B_URING, NBACKENDS };
enum { K_SLEEP, K_READY, K_SPIN, NKINDS };
static const char *backend_name[] = { "ppoll", "epoll", "io_uring" };
static const char *kind_name[] = { "sleep", "ready", "spin" };

typedef struct {
    int64_t waiter_cpu, notifier_cpu, latency;
} Sample;

static int efd, epfd;
static struct io_uring ring;
static int backend, kind, iters;
static int64_t delay_ns;
static Sample *samples;

/* Handshake between the threads, one round per wait */
static atomic_int armed;        /* waiter: about to wait in round n */
static atomic_int done;         /* waiter: finished round n */
static atomic_int spin_word;    /* notifier: the event, for K_SPIN */
static atomic_llong t_write;    /* notifier: when it wrote */

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void wait_fd(void)
{
    switch (backend) {
    case B_PPOLL: {
        struct pollfd p = { .fd = efd, .events = POLLIN };

        if (ppoll(&p, 1, NULL, NULL) != 1) {
            die("ppoll");
        }
        break;
    }
    case B_EPOLL: {
        struct epoll_event ev;

        if (epoll_wait(epfd, &ev, 1, -1) != 1) {
            die("epoll_wait");
        }
        break;
    }
    case B_URING: {
        /* One poll SQE per wait, as fdmon-io_uring re-arms after an event */
        struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
        struct io_uring_cqe *cqe;

        io_uring_prep_poll_add(sqe, efd, POLLIN);
        if (io_uring_submit_and_wait(&ring, 1) < 0 ||
            io_uring_wait_cqe(&ring, &cqe) < 0) {
            die("io_uring");
        }
        io_uring_cqe_seen(&ring, cqe);
        break;
    }
    }
}

static void *notifier(void *arg __attribute__((unused)))
{
    uint64_t one = 1;

    for (int n = 1; n <= iters; n++) {
        int64_t c0, c1, t;

        while (atomic_load(&armed) != n) {
        }
        if (kind != K_READY) {
            t = probe_now(CLOCK_MONOTONIC);
            while (probe_now(CLOCK_MONOTONIC) - t < delay_ns) {
            }
        }
        c0 = probe_now(CLOCK_THREAD_CPUTIME_ID);
        atomic_store(&t_write, probe_now(CLOCK_MONOTONIC));
        if (kind == K_SPIN) {
            atomic_store(&spin_word, n);
        } else if (write(efd, &one, sizeof(one)) != sizeof(one)) {
            die("write");
        }
        c1 = probe_now(CLOCK_THREAD_CPUTIME_ID);
        samples[n - 1].notifier_cpu = c1 - c0;
        while (atomic_load(&done) != n) {
        }
    }
    return NULL;
}

static void waiter(void)
{
    uint64_t v;

    for (int n = 1; n <= iters; n++) {
        int64_t c0, c1, t;

        if (kind == K_READY) {
            atomic_store(&armed, n);
            /* Wait until the notifier's write has landed */
            for (;;) {
                struct pollfd p = { .fd = efd, .events = POLLIN };

                if (poll(&p, 1, 0) == 1) {
                    break;
                }
            }
        } else {
            atomic_store(&armed, n);
        }
        c0 = probe_now(CLOCK_THREAD_CPUTIME_ID);
        if (kind == K_SPIN) {
            while (atomic_load(&spin_word) != n) {
            }
        } else {
            wait_fd();
        }
        t = probe_now(CLOCK_MONOTONIC);
        c1 = probe_now(CLOCK_THREAD_CPUTIME_ID);
        if (kind != K_SPIN && read(efd, &v, sizeof(v)) != sizeof(v)) {
            die("read");
        }
        samples[n - 1].waiter_cpu = c1 - c0;
        samples[n - 1].latency = t - atomic_load(&t_write);
        atomic_store(&done, n);
    }
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

/* Median and mean of one field, dropping the first tenth as warm-up */
static void stats(size_t off, double *median, double *mean)
{
    int skip = iters / 10, n = iters - skip;
    int64_t *v = malloc(n * sizeof(*v));
    double sum = 0;

    for (int i = 0; i < n; i++) {
        v[i] = *(int64_t *)((char *)&samples[skip + i] + off);
        sum += v[i];
    }
    qsort(v, n, sizeof(*v), cmp64);
    *median = v[n / 2];
    *mean = sum / n;
    free(v);
}

int main(int argc, char **argv)
{
    double med[NBACKENDS][NKINDS][3], mean[NBACKENDS][NKINDS][3];
    static const size_t offs[3] = {
        offsetof(Sample, waiter_cpu), offsetof(Sample, notifier_cpu),
        offsetof(Sample, latency),
    };
    struct epoll_event ev = { .events = EPOLLIN };

    iters = argc > 1 ? atoi(argv[1]) : 20000;
    delay_ns = argc > 2 ? atoll(argv[2]) : 50000;
    if (iters < 100 || delay_ns < 0) {
        fprintf(stderr, "usage: wakeup_cost [ITERATIONS>=100] [DELAY_NS]\n");
        return 2;
    }
    samples = calloc(iters, sizeof(*samples));
    efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (efd < 0 || epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, efd, &ev) < 0) {
        die("eventfd/epoll");
    }
    if (io_uring_queue_init(8, &ring, 0) < 0) {
        die("io_uring_queue_init");
    }

    printf("backend,kind,iterations,delay_ns,"
           "waiter_cpu_median_ns,waiter_cpu_mean_ns,"
           "notifier_cpu_median_ns,notifier_cpu_mean_ns,"
           "latency_median_ns,latency_mean_ns\n");
    for (backend = 0; backend < NBACKENDS; backend++) {
        for (kind = 0; kind < NKINDS; kind++) {
            pthread_t t;

            atomic_store(&armed, 0);
            atomic_store(&done, 0);
            atomic_store(&spin_word, 0);
            pthread_create(&t, NULL, notifier, NULL);
            waiter();
            pthread_join(t, NULL);
            for (int f = 0; f < 3; f++) {
                stats(offs[f], &med[backend][kind][f], &mean[backend][kind][f]);
            }
            printf("%s,%s,%d,%lld,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f\n",
                   backend_name[backend], kind_name[kind], iters,
                   (long long)delay_ns,
                   med[backend][kind][0], mean[backend][kind][0],
                   med[backend][kind][1], mean[backend][kind][1],
                   med[backend][kind][2], mean[backend][kind][2]);
        }
    }
    printf("\nbackend,wakeup_cpu_ns,wakeup_latency_ns (means; medians in brackets)\n");
    for (backend = 0; backend < NBACKENDS; backend++) {
        double (*m)[3] = mean[backend], (*d)[3] = med[backend];

        printf("%s,%.0f,%.0f (%.0f,%.0f)\n", backend_name[backend],
               m[K_SLEEP][0] - m[K_READY][0] + m[K_SLEEP][1] - m[K_READY][1],
               m[K_SLEEP][2] - m[K_SPIN][2],
               d[K_SLEEP][0] - d[K_READY][0] + d[K_SLEEP][1] - d[K_READY][1],
               d[K_SLEEP][2] - d[K_SPIN][2]);
    }
    io_uring_queue_exit(&ring);
    return 0;
}
