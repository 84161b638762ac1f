/*
 * probe.c: one position of a tablebase through libtbforge's C API.
 *
 *     probe DIR POSITION
 *
 * prints what the first four lines of `tbforge probe DIR POSITION` say: the
 * game and the position, its index (partition id and rank), its outcome for
 * the side to move (with the distance in plies where the tablebase stores
 * one) and its best moves. On failure it prints the library's message to
 * stderr and exits with status 1; with the wrong arguments, status 2.
 *
 * Build and run (README.md, "C library"):
 *     cargo build --release -p tbforge-capi
 *     cc -std=c99 -Iinclude examples/c/probe.c -Ltarget/release -ltbforge -o probe
 *     LD_LIBRARY_PATH=target/release ./probe tablebases/tictactoe x...o....
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "tbforge.h"

/* Prints the calling thread's last error and closes `tb` (NULL is fine). */
static int fail(tbf_tablebase *tb)
{
    char message[1024];
    size_t len = tbf_last_error(message, sizeof message);
    /* A longer message was cut short: say so rather than hide it. */
    fprintf(stderr, "probe: error: %s%s\n", message, len >= sizeof message ? "..." : "");
    tbf_close(tb);
    return 1;
}

static const char *outcome_name(tbf_outcome outcome)
{
    switch (outcome) {
    case TBF_WIN:
        return "win";
    case TBF_LOSS:
        return "loss";
    default:
        return "draw";
    }
}

int main(int argc, char **argv)
{
    tbf_tablebase *tb;
    tbf_result result;
    uint32_t partition;
    uint64_t rank;
    size_t needed;
    char *moves;

    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR POSITION\n", argv[0]);
        return 2;
    }
    if (tbf_open(argv[1], &tb) != TBF_OK
        || tbf_index(tb, argv[2], &partition, &rank) != TBF_OK
        || tbf_probe(tb, argv[2], &result) != TBF_OK)
        return fail(tb);

    /* The moves' length is not known in advance: ask for the size, then
     * fetch them into a buffer that fits. */
    if (tbf_best_moves(tb, argv[2], NULL, 0, &needed) != TBF_ERR_BUFFER_TOO_SMALL)
        return fail(tb);
    moves = malloc(needed);
    if (moves == NULL) {
        fprintf(stderr, "probe: error: out of memory for %zu bytes of moves\n", needed);
        tbf_close(tb);
        return 1;
    }
    if (tbf_best_moves(tb, argv[2], moves, needed, NULL) != TBF_OK) {
        free(moves);
        return fail(tb);
    }

    printf("%s %s\n", tbf_game(tb), argv[2]);
    printf("partition %" PRIu32 ", rank %" PRIu64 "\n", partition, rank);
    if (result.has_distance)
        printf("%s in %" PRIu32 "\n", outcome_name(result.outcome), result.distance);
    else
        printf("%s\n", outcome_name(result.outcome));
    printf("best moves: %s\n", moves[0] != '\0' ? moves : "none");

    free(moves);
    tbf_close(tb);
    return 0;
}
