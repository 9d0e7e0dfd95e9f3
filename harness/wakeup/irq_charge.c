/*
 * irq_charge: how much of a polling thread's CPU time is the work of
 * interrupts that land on its CPU while it runs.
 *
 * A spinner thread, pinned to one CPU, reads CLOCK_MONOTONIC in a tight
 * loop, as QEMU's polling loop reads the clock between io_poll() calls.
 * Every step between two reads longer than GAP_NS is time the thread did
 * not run its loop: an interrupt handled on its CPU, a preemption, or time
 * the hypervisor took the virtual CPU away.  The run has two phases of
 * SECONDS each:
 *
 *   idle  nothing else runs;
 *   io    a reader thread, pinned to another CPU, reads FILE with O_DIRECT
 *         at RATE reads per second, 8 KiB at a random offset each, so that
 *         the disk's completion interrupts come while the spinner runs.
 *
 * Per phase it prints the spinner's wall and CPU time
 * (CLOCK_THREAD_CPUTIME_ID), the number and total length of its gaps, and
 * the interrupts that its CPU took (all rows of /proc/interrupts).  Then
 *
 *   charge per interrupt = (gap time io - gap time idle)
 *                        / (interrupts io - interrupts idle)
 *
 * (column charge_us_per_interrupt of the io line) is what one interrupt
 * cost the spinner, and cpu_per_wall says whether the
 * kernel counted the gaps as the spinner's CPU time (1.000: it did, as a
 * kernel without IRQ_TIME_ACCOUNTING and a hypervisor that reports no steal
 * time do).  Run it with the spinner on the CPU that takes the disk's
 * interrupts and again on another one to see that the charge follows them.
 *
 * Usage: irq_charge SPIN_CPU IO_CPU FILE [RATE] [SECONDS] [GAP_NS]
 * (defaults 2000 reads/s, 3 s, 1000 ns).  FILE must hold written data (a
 * sparse file's holes are read without the disk).  Output: CSV, one line
 * per phase; IRQ_CHARGE_NO_HEADER=1 leaves out the header line.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define BLOCK 8192

static int spin_cpu, io_cpu, fd;
static long rate;
static int64_t run_ns, gap_ns;
static off_t blocks;
static atomic_int reading;
static atomic_long reads_done;

static void pin(int cpu)
{
    int r = probe_pin(cpu);

    if (r) {
        fprintf(stderr, "irq_charge: cannot pin to CPU %d: %s\n", cpu,
                strerror(r));
        exit(1);
    }
}

/* All interrupts that CPU has taken: the sum of its column */
static long long cpu_interrupts(int cpu)
{
    FILE *f = fopen("/proc/interrupts", "r");
    char line[4096];
    long long sum = 0;
    int ncpu = 0;

    if (!f) {
        perror("irq_charge: /proc/interrupts");
        exit(1);
    }
    if (fgets(line, sizeof(line), f)) {
        for (char *p = strtok(line, " \t\n"); p; p = strtok(NULL, " \t\n")) {
            ncpu++;
        }
    }
    while (fgets(line, sizeof(line), f)) {
        char *p = strchr(line, ':');
        int col;

        if (!p) {
            continue;
        }
        p++;
        for (col = 0; col < ncpu; col++) {
            char *end;
            long long v = strtoll(p, &end, 10);

            if (end == p) {
                break;
            }
            if (col == cpu) {
                sum += v;
            }
            p = end;
        }
    }
    fclose(f);
    return sum;
}

static void *reader(void *arg)
{
    void *buf;
    int64_t next = probe_now(CLOCK_MONOTONIC), period = 1000000000LL / rate;
    unsigned seed = 1;

    pin(io_cpu);
    if (posix_memalign(&buf, 4096, BLOCK)) {
        exit(1);
    }
    while (atomic_load(&reading)) {
        int64_t t = probe_now(CLOCK_MONOTONIC);

        if (t < next) {
            struct timespec ts = { 0, next - t };

            nanosleep(&ts, NULL);
            continue;
        }
        next += period;
        if (pread(fd, buf, BLOCK, (off_t)(rand_r(&seed) % blocks) * BLOCK)
            != BLOCK) {
            perror("irq_charge: pread");
            exit(1);
        }
        atomic_fetch_add(&reads_done, 1);
    }
    free(buf);
    return NULL;
}

static int64_t idle_gap_total;
static long long idle_interrupts;

static void phase(const char *name, int with_io)
{
    pthread_t th;
    long long irq0, irq1;
    int64_t start, prev, cpu0, cpu1, gaps = 0, gap_total = 0;
    long reads;

    atomic_store(&reads_done, 0);
    if (with_io) {
        atomic_store(&reading, 1);
        pthread_create(&th, NULL, reader, NULL);
        usleep(100000);
    }
    irq0 = cpu_interrupts(spin_cpu);
    cpu0 = probe_now(CLOCK_THREAD_CPUTIME_ID);
    start = prev = probe_now(CLOCK_MONOTONIC);
    while (prev - start < run_ns) {
        int64_t t = probe_now(CLOCK_MONOTONIC);

        if (t - prev > gap_ns) {
            gaps++;
            gap_total += t - prev;
        }
        prev = t;
    }
    cpu1 = probe_now(CLOCK_THREAD_CPUTIME_ID);
    irq1 = cpu_interrupts(spin_cpu);
    reads = atomic_load(&reads_done);
    if (with_io) {
        atomic_store(&reading, 0);
        pthread_join(th, NULL);
    }
    printf("%s,%d,%d,%.6f,%.6f,%.4f,%lld,%.3f,%lld,%ld,", name, spin_cpu,
           io_cpu, (prev - start) / 1e9, (cpu1 - cpu0) / 1e9,
           (double)(cpu1 - cpu0) / (prev - start), (long long)gaps,
           gap_total / 1e6, irq1 - irq0, reads);
    if (!with_io) {
        idle_gap_total = gap_total;
        idle_interrupts = irq1 - irq0;
        printf("\n");
    } else if (irq1 - irq0 > idle_interrupts) {
        printf("%.1f\n", (gap_total - idle_gap_total) / 1e3 /
               (irq1 - irq0 - idle_interrupts));
    } else {
        printf("-\n");     /* the interrupts went to another CPU */
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct stat st;

    if (argc < 4) {
        fprintf(stderr, "usage: irq_charge SPIN_CPU IO_CPU FILE [RATE] "
                "[SECONDS] [GAP_NS]\n");
        return 2;
    }
    spin_cpu = atoi(argv[1]);
    io_cpu = atoi(argv[2]);
    rate = argc > 4 ? atol(argv[4]) : 2000;
    run_ns = (int64_t)((argc > 5 ? atof(argv[5]) : 3.0) * 1e9);
    gap_ns = argc > 6 ? atoll(argv[6]) : 1000;
    fd = open(argv[3], O_RDONLY | O_DIRECT);
    if (fd < 0 || fstat(fd, &st) || st.st_size < BLOCK || rate <= 0) {
        fprintf(stderr, "irq_charge: need a readable file of at least %d "
                "bytes that O_DIRECT can open, and RATE > 0\n", BLOCK);
        return 2;
    }
    blocks = st.st_size / BLOCK;
    pin(spin_cpu);
    if (!getenv("IRQ_CHARGE_NO_HEADER")) {
        printf("phase,spin_cpu,io_cpu,wall_s,cpu_s,cpu_per_wall,gaps,gap_ms,"
               "interrupts,reads,charge_us_per_interrupt\n");
    }
    phase("idle", 0);
    phase("io", 1);
    return 0;
}
