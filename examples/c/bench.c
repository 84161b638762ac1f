/*
 * bench.c: the latency of a probe through libtbforge's C API.
 *
 *     bench DIR POSITION [N]
 *
 * times N probes (default 10,000,000) of one index with tbf_probe_rank,
 * whose block is decompressed and cached by the first probe, so the figure
 * is the cost of the call itself: argument checks, the panic guard, the
 * cache look-up. Then N/100 probes of the position's text with tbf_probe,
 * which also parses the text (the same cached block). Prints ns/probe.
 * scripts/c_example.sh runs it.
 */
#define _POSIX_C_SOURCE 199309L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tbforge.h"

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int fail(tbf_tablebase *tb)
{
    char message[1024];
    tbf_last_error(message, sizeof message);
    fprintf(stderr, "bench: error: %s\n", message);
    tbf_close(tb);
    return 1;
}

int main(int argc, char **argv)
{
    tbf_tablebase *tb;
    tbf_result result;
    uint32_t partition;
    uint64_t rank, sum = 0;
    long n = 10000000, i;
    double start, by_rank, by_text;

    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s DIR POSITION [N]\n", argv[0]);
        return 2;
    }
    if (argc == 4 && (n = strtol(argv[3], NULL, 10)) < 100) {
        fprintf(stderr, "bench: N must be a number of at least 100, not `%s`\n", argv[3]);
        return 2;
    }
    if (tbf_open(argv[1], &tb) != TBF_OK
        || tbf_index(tb, argv[2], &partition, &rank) != TBF_OK
        || tbf_probe_rank(tb, partition, rank, &result) != TBF_OK)
        return fail(tb);

    start = now_ns();
    for (i = 0; i < n; i++) {
        if (tbf_probe_rank(tb, partition, rank, &result) != TBF_OK)
            return fail(tb);
        sum += result.distance;
    }
    by_rank = (now_ns() - start) / (double)n;

    start = now_ns();
    for (i = 0; i < n / 100; i++) {
        if (tbf_probe(tb, argv[2], &result) != TBF_OK)
            return fail(tb);
        sum += result.distance;
    }
    by_text = (now_ns() - start) / (double)(n / 100);

    printf("tbf_probe_rank (cached block): %.1f ns/probe over %ld probes\n", by_rank, n);
    printf("tbf_probe (text):              %.1f ns/probe over %ld probes\n", by_text, n / 100);
    /* Printed so that no compiler may drop the loops' results. */
    printf("(distance sum %" PRIu64 ")\n", sum);
    tbf_close(tb);
    return 0;
}
