/*
 * What the probes of harness/wakeup share: a clock read in nanoseconds and
 * pinning the calling thread to one CPU.  Include after _GNU_SOURCE.
 */
#ifndef PROBE_H
#define PROBE_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

/* @clk's time in nanoseconds */
static inline int64_t probe_now(clockid_t clk)
{
    struct timespec ts;

    clock_gettime(clk, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Pin the calling thread to @cpu; returns 0, or an error number */
static inline int probe_pin(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

#endif
