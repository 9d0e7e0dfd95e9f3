/*
 * uring_notice: how soon an IOThread that polls sees that a socket without
 * io_poll() became readable, when the fd monitor is io_uring.
 *
 * QEMU's fdmon-io_uring (util/fdmon-io_uring.c) watches such an fd with an
 * IORING_OP_POLL_ADD in a ring set up without flags, and its need_wait(),
 * which the polling loop asks on every round, reads the completion queue's
 * tail: no system call.  When the socket becomes readable the kernel queues
 * the completion as task work of the thread that owns the ring and kicks
 * it; a thread spinning in user space runs that task work, and the
 * completion appears in the queue, only when the kick (an IPI) has
 * interrupted it.
 *
 * A waiter thread pinned to one CPU owns a ring with a POLL_ADD for one end
 * of a unix socket pair; a writer thread pinned to another CPU writes one
 * byte at a random time 20-60 us after the waiter began to wait, and
 * notes the clock just before its write().  The waiter, per MODE:
 *
 *   spin   reads the completion queue's tail in a loop, as the polling
 *          loop does through need_wait(), for at most 1 ms;
 *   enter  the same, with io_uring_get_events() (a system call, which runs
 *          pending task work) before each read;
 *   sleep  blocks in io_uring_wait_cqe(), as fdmon_io_uring_wait() does.
 *
 * Printed per mode (CSV): how long from the write() to the moment the
 * waiter saw the completion (median, 10th and 90th percentile, mean, ns),
 * over ROUNDS rounds, the first tenth dropped; for spin and enter how many
 * rounds saw it within the 1 ms at all, and the mean length of one round of
 * the loop (enter: the cost of the system call per round).
 *
 * Usage: uring_notice MODE WAIT_CPU WRITE_CPU [ROUNDS] (default 4000).
 * URING_NOTICE_NO_HEADER=1 leaves out the header line.  Exits 3 where the
 * kernel refuses io_uring (kernel.io_uring_disabled), 2 on bad usage.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define SPIN_MAX_NS 1000000
#define DELAY_MIN_NS 20000
#define DELAY_SPAN_NS 40000

enum { MODE_SPIN, MODE_ENTER, MODE_SLEEP };

static int sv[2];
static int write_cpu;
static atomic_long write_at;    /* when the writer should write; 0: idle */
static atomic_long written_at;  /* the clock just before its write() */
static atomic_int quit;

static void *writer(void *arg)
{
    if (probe_pin(write_cpu)) {
        fprintf(stderr, "uring_notice: cannot pin the writer to CPU %d\n",
                write_cpu);
        exit(1);
    }
    while (!atomic_load(&quit)) {
        int64_t t = atomic_load(&write_at);
        int64_t n;

        if (!t || (n = probe_now(CLOCK_MONOTONIC)) < t) {
            continue;
        }
        atomic_store(&write_at, 0);
        atomic_store(&written_at, n);
        if (write(sv[1], "x", 1) != 1) {
            perror("uring_notice: write");
            exit(1);
        }
    }
    return NULL;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    static const char *const names[] = { "spin", "enter", "sleep" };
    int mode = -1, wait_cpu, rounds = 4000, skip, n = 0, seen = 0, i, r;
    int64_t *lat, loops = 0, loop_ns = 0, sum = 0;
    struct io_uring ring;
    pthread_t tw;
    char *end;

    for (i = 0; i < 3 && argc > 1; i++) {
        if (!strcmp(argv[1], names[i])) {
            mode = i;
        }
    }
    if (argc < 4 || mode < 0) {
        fprintf(stderr, "usage: uring_notice spin|enter|sleep WAIT_CPU "
                "WRITE_CPU [ROUNDS]\n");
        return 2;
    }
    wait_cpu = strtol(argv[2], &end, 10);
    write_cpu = strtol(argv[3], &end, 10);
    if (argc > 4) {
        rounds = strtol(argv[4], &end, 10);
        if (*end || rounds < 10) {
            fprintf(stderr, "uring_notice: ROUNDS must be 10 or more\n");
            return 2;
        }
    }
    if (wait_cpu == write_cpu) {
        fprintf(stderr, "uring_notice: the two threads need two CPUs\n");
        return 2;
    }
    skip = rounds / 10;
    lat = calloc(rounds, sizeof(*lat));
    if (!lat || socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
        perror("uring_notice: setup");
        return 1;
    }
    if (probe_pin(wait_cpu)) {
        fprintf(stderr, "uring_notice: cannot pin the waiter to CPU %d\n",
                wait_cpu);
        return 1;
    }
    r = io_uring_queue_init(8, &ring, 0);   /* as fdmon-io_uring: no flags */
    if (r) {
        fprintf(stderr, "uring_notice: io_uring_queue_init: %s\n",
                strerror(-r));
        return 3;
    }
    pthread_create(&tw, NULL, writer, NULL);
    srand(1);

    for (i = 0; i < rounds; i++) {
        struct io_uring_cqe *cqe;
        int64_t t0, t = 0;
        int got = 0;
        char c;

        io_uring_prep_poll_add(io_uring_get_sqe(&ring), sv[0], POLLIN);
        io_uring_submit(&ring);
        usleep(200);
        t0 = probe_now(CLOCK_MONOTONIC);
        atomic_store(&write_at,
                     t0 + DELAY_MIN_NS + rand() % DELAY_SPAN_NS);
        if (mode == MODE_SLEEP) {
            if (io_uring_wait_cqe(&ring, &cqe)) {
                abort();
            }
            t = probe_now(CLOCK_MONOTONIC);
            got = 1;
        } else {
            do {
                if (mode == MODE_ENTER) {
                    io_uring_get_events(&ring);
                }
                t = probe_now(CLOCK_MONOTONIC);
                loops++;
                if (io_uring_cq_ready(&ring)) {
                    got = 1;
                    break;
                }
            } while (t - t0 < SPIN_MAX_NS);
            loop_ns += t - t0;
            if (io_uring_wait_cqe(&ring, &cqe)) {
                abort();
            }
        }
        io_uring_cqe_seen(&ring, cqe);
        if (read(sv[0], &c, 1) != 1) {
            abort();
        }
        if (!atomic_load(&written_at)) {
            abort();
        }
        if (i >= skip && got) {
            lat[n] = t - atomic_load(&written_at);
            sum += lat[n];
            n++;
        }
        seen += i >= skip && got;
        atomic_store(&written_at, 0);
    }
    atomic_store(&quit, 1);
    pthread_join(tw, NULL);

    qsort(lat, n, sizeof(*lat), cmp64);
    if (!getenv("URING_NOTICE_NO_HEADER")) {
        printf("mode,rounds,seen,median_ns,p10_ns,p90_ns,mean_ns,"
               "loop_round_ns\n");
    }
    printf("%s,%d,%d,%lld,%lld,%lld,%lld,%lld\n", names[mode],
           rounds - skip, seen,
           n ? (long long)lat[n / 2] : -1LL,
           n ? (long long)lat[n / 10] : -1LL,
           n ? (long long)lat[n * 9 / 10] : -1LL,
           n ? (long long)(sum / n) : -1LL,
           mode == MODE_SLEEP || !loops ? -1LL :
           (long long)(loop_ns / loops));
    return 0;
}
