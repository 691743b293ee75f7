/* Connect four's exact solver, in C for speed: the algorithm of connectfour_solver.py (Pascal
   Pons' design: bitboards, negamax with alpha-beta on his score, moves that do not lose at
   once, threat-count ordering, a transposition table of bounds, null-window probes), about
   50 times faster than the Python. Compiled once into agentgym's cache by
   connectfour_native.py and called through ctypes; one search at a time per process.

   The table is emptied at every call (by a generation counter), so whether a search fits its
   budget depends on the position alone: the same game replays the same moves. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 7
#define HEIGHT 6
#define LANE (HEIGHT + 1)
#define CELLS (WIDTH * HEIGHT)
#ifndef TABLE_SIZE /* the book writer compiles a larger table (-DTABLE_SIZE=67108879u) */
#define TABLE_SIZE 8388593u /* a prime above 2^17: the key's low 32 bits identify it */
#endif

typedef uint64_t u64;

#define C4_ILLEGAL -100
#define C4_BUDGET -101

static const int CENTRE_FIRST[WIDTH] = {3, 2, 4, 1, 5, 0, 6};
static u64 bottom, board;
static uint32_t *keys;
static uint8_t *ages, age; /* an entry is live when its age is the call's */
static int8_t *lower, *upper;
static long long nodes, limit; /* limit 0: no budget */
static int aborted;

static u64 column_bits(int column) { return ((1ULL << HEIGHT) - 1) << (column * LANE); }

static u64 winning_cells(u64 stones, u64 mask) {
    u64 cells = (stones << 1) & (stones << 2) & (stones << 3), pair;
    static const int steps[3] = {LANE, LANE - 1, LANE + 1};
    for (int i = 0; i < 3; i++) {
        int s = steps[i];
        pair = (stones << s) & (stones << 2 * s);
        cells |= pair & (stones << 3 * s);
        cells |= pair & (stones >> s);
        pair = (stones >> s) & (stones >> 2 * s);
        cells |= pair & (stones << s);
        cells |= pair & (stones >> 3 * s);
    }
    return cells & (board ^ mask);
}

static u64 possible(u64 mask) { return (mask + bottom) & board; }

static u64 non_losing_moves(u64 current, u64 mask) {
    u64 moves = possible(mask), threats = winning_cells(current ^ mask, mask);
    u64 forced = moves & threats;
    if (forced) {
        if (forced & (forced - 1)) return 0;
        moves = forced;
    }
    return moves & ~(threats >> 1);
}

static void table_clear(void) {
    if (++age == 0) {
        memset(ages, 0, TABLE_SIZE);
        age = 1;
    }
}

int c4_init(void) {
    if (keys) return 0;
    for (int c = 0; c < WIDTH; c++) bottom |= 1ULL << (c * LANE);
    board = bottom * ((1ULL << HEIGHT) - 1);
    keys = malloc(TABLE_SIZE * sizeof *keys);
    ages = calloc(TABLE_SIZE, 1);
    lower = malloc(TABLE_SIZE);
    upper = malloc(TABLE_SIZE);
    if (!keys || !ages || !lower || !upper) return -1;
    return 0;
}

static void store(u64 key, int value, int is_lower) {
    uint32_t i = key % TABLE_SIZE;
    if (keys[i] != (uint32_t)key || ages[i] != age) {
        keys[i] = (uint32_t)key;
        ages[i] = age;
        lower[i] = -128;
        upper[i] = 127;
    }
    if (is_lower) lower[i] = value; else upper[i] = value;
}

static int negamax(u64 current, u64 mask, int moves, int alpha, int beta) {
    if (++nodes > limit && limit) aborted = 1;
    if (aborted) return 0;
    u64 next = non_losing_moves(current, mask);
    if (!next) return -((CELLS - moves) / 2);
    if (moves >= CELLS - 2) return 0;
    u64 key = current + mask;
    uint32_t i = key % TABLE_SIZE;
    int known_lower = -CELLS, known_upper = CELLS;
    if (keys[i] == (uint32_t)key && ages[i] == age) {
        if (lower[i] != -128) known_lower = lower[i];
        if (upper[i] != 127) known_upper = upper[i];
    }
    int floor = -((CELLS - 2 - moves) / 2);
    if (alpha < floor) alpha = floor;
    if (alpha < known_lower) alpha = known_lower;
    if (alpha >= beta) return alpha;
    int ceiling = (CELLS - 1 - moves) / 2;
    if (beta > ceiling) beta = ceiling;
    if (beta > known_upper) beta = known_upper;
    if (alpha >= beta) return beta;
    u64 bits[WIDTH];
    int scores[WIDTH], count = 0;
    for (int k = 0; k < WIDTH; k++) { /* insertion sort, most threats first, stable */
        u64 bit = next & column_bits(CENTRE_FIRST[k]);
        if (!bit) continue;
        int score = __builtin_popcountll(winning_cells(current | bit, mask));
        int j = count++;
        for (; j > 0 && scores[j - 1] < score; j--) {
            bits[j] = bits[j - 1];
            scores[j] = scores[j - 1];
        }
        bits[j] = bit;
        scores[j] = score;
    }
    for (int k = 0; k < count; k++) {
        int score = -negamax(current ^ mask, mask | bits[k], moves + 1, -beta, -alpha);
        if (aborted) return 0;
        if (score >= beta) {
            store(key, score, 1);
            return score;
        }
        if (score > alpha) alpha = score;
    }
    store(key, alpha, 0);
    return alpha;
}

/* The exact score (Pons' convention) of the position, for a mover who cannot win at once;
   within [low, high] only (a weak solve asks [-1, 1]). */
static int solve(u64 current, u64 mask, int moves, int low, int high) {
    while (low < high) {
        int middle = low + (high - low) / 2;
        if (middle <= 0 && low / 2 < middle) middle = low / 2;
        else if (middle >= 0 && high / 2 > middle) middle = high / 2;
        int score = negamax(current, mask, moves, middle, middle + 1);
        if (aborted) return 0;
        if (score <= middle) high = score; else low = score;
    }
    return low;
}

/* Play ``count`` columns (0-6) from the empty board; -1 if one is illegal or ends the game. */
static int replay(const int8_t *columns, int count, u64 *current, u64 *mask) {
    *current = *mask = 0;
    for (int k = 0; k < count; k++) {
        int c = columns[k];
        if (c < 0 || c >= WIDTH || (*mask & (1ULL << (HEIGHT - 1 + c * LANE)))) return -1;
        u64 bit = (*mask + (1ULL << (c * LANE))) & column_bits(c);
        if (winning_cells(*current, *mask) & bit) return -1;
        *current ^= *mask;
        *mask |= bit;
    }
    return 0;
}

static int start(const int8_t *columns, int count, long long budget, u64 *current, u64 *mask) {
    if (c4_init() || replay(columns, count, current, mask)) return -1;
    table_clear();
    nodes = 0;
    limit = budget;
    aborted = 0;
    return 0;
}

/* The exact score (Pons' convention) after ``columns`` for the player to move. Returns
   C4_ILLEGAL for a sequence that is not a game in progress, C4_BUDGET past ``budget``
   positions (0: no budget); ``*visited`` gets the positions searched. */
int c4_solve(const int8_t *columns, int count, long long budget, long long *visited) {
    u64 current, mask;
    if (start(columns, count, budget, &current, &mask) || count >= CELLS) return C4_ILLEGAL;
    int score = (CELLS + 1 - count) / 2;
    if (!(winning_cells(current, mask) & possible(mask)))
        score = solve(current, mask, count, -((CELLS - count) / 2), score);
    *visited = nodes;
    return aborted ? C4_BUDGET : score;
}

/* A best column after ``columns``: the first, centre first, that keeps the position's exact
   score (``*value``); C4_ILLEGAL or C4_BUDGET as c4_solve. With ``weak`` the score is only its
   sign (1 win, 0 draw, -1 loss), which a search proves many times faster: the column keeps
   the win or the draw; in a lost position every column loses, and the first legal one is
   returned unprobed (the caller picks its defence). */
int c4_best_move(const int8_t *columns, int count, long long budget, int weak, int *value,
                 long long *visited) {
    u64 current, mask;
    if (start(columns, count, budget, &current, &mask) || count >= CELLS) return C4_ILLEGAL;
    u64 moves = possible(mask), wins = winning_cells(current, mask);
    int first = -1;
    *value = weak ? 1 : (CELLS + 1 - count) / 2;
    for (int k = 0; k < WIDTH; k++)
        if (moves & wins & column_bits(CENTRE_FIRST[k])) return CENTRE_FIRST[k];
    if (weak) {
        int sign = solve(current, mask, count, -1, 1);
        *value = (sign > 0) - (sign < 0);
        if (*value < 0) {
            for (int k = 0; first < 0; k++)
                if (moves & column_bits(CENTRE_FIRST[k])) first = CENTRE_FIRST[k];
            *visited = nodes;
            return aborted ? C4_BUDGET : first;
        }
    } else {
        *value = solve(current, mask, count, -((CELLS - count) / 2), *value);
    }
    for (int k = 0; k < WIDTH && !aborted; k++) {
        u64 bit = moves & column_bits(CENTRE_FIRST[k]);
        if (!bit) continue;
        if (first < 0) first = CENTRE_FIRST[k];
        u64 child = current ^ mask, child_mask = mask | bit;
        if (winning_cells(child, child_mask) & possible(child_mask)) continue;
        int score = negamax(child, child_mask, count + 1, -*value, -*value + 1);
        if (!aborted && score <= -*value) {
            first = CENTRE_FIRST[k];
            break;
        }
    }
    *visited = nodes;
    return aborted ? C4_BUDGET : first;
}
