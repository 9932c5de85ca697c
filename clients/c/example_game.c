/* A small game loop that streams its boxes to Partition Studio (see docs/live-link.md).
 *
 *     cc -std=c99 -O2 -o example_game example_game.c      (Windows: add -lws2_32)
 *     python app.py listen --port 7878 --json > report.json &
 *     ./example_game --port 7878 --frames 300 --movers 1000
 *
 * Movers bounce inside a level-like set of static boxes (floor tiles and pillars); every
 * fifth mover sleeps on alternate seconds. --save FILE writes the stream to a file instead,
 * --text sends frame lines instead of binary frames.
 */
#define PS_LINK_IMPLEMENTATION
#include "ps_link.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE 2048.0f

static uint32_t rng_state = 1;
static float uniform(float lo, float hi) {  /* xorshift32: the same boxes on every platform */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return lo + (hi - lo) * (float)(rng_state >> 8) / 16777216.0f;
}

int main(int argc, char **argv) {
    const char *host = "127.0.0.1", *save = NULL;
    int port = PS_LINK_DEFAULT_PORT, frames = 300, movers = 1000, statics = 400, text = 0, i, f, k, a;
    uint32_t *ids, *sids;
    float *boxes, *sboxes, *vel;
    uint8_t *awake;
    ps_link *link;
    int side, rc;
    for (i = 1; i < argc; ++i) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(arg, "--text")) { text = 1; continue; }
        if (!val) { fprintf(stderr, "example_game: %s needs a value\n", arg); return 2; }
        if (!strcmp(arg, "--host")) host = val;
        else if (!strcmp(arg, "--port")) port = atoi(val);
        else if (!strcmp(arg, "--frames")) frames = atoi(val);
        else if (!strcmp(arg, "--movers")) movers = atoi(val);
        else if (!strcmp(arg, "--static")) statics = atoi(val);
        else if (!strcmp(arg, "--seed")) rng_state = (uint32_t)atoi(val) * 2654435761u + 1u;
        else if (!strcmp(arg, "--save")) save = val;
        else { fprintf(stderr, "example_game: unknown option %s\n", arg); return 2; }
        ++i;
    }
    if (movers < 0 || statics < 0 || frames < 0) { fprintf(stderr, "example_game: counts must be >= 0\n"); return 2; }
    link = save ? ps_link_save(save) : ps_link_connect(host, port, 0);
    if (!link) { fprintf(stderr, "example_game: %s\n", ps_link_last_error()); return 2; }
    ids = malloc(sizeof *ids * (size_t)(movers + 1));
    boxes = malloc(sizeof *boxes * 6 * (size_t)(movers + 1));
    vel = malloc(sizeof *vel * 3 * (size_t)(movers + 1));
    awake = malloc((size_t)movers + 1);
    sids = malloc(sizeof *sids * (size_t)(statics + 1));
    sboxes = malloc(sizeof *sboxes * 6 * (size_t)(statics + 1));
    if (!ids || !boxes || !vel || !awake || !sids || !sboxes) { fprintf(stderr, "example_game: out of memory\n"); return 1; }
    side = (int)sqrt((double)statics);
    if (side < 1) side = 1;
    for (k = 0; k < statics; ++k) {
        float step = SIZE / (float)side, x = (float)(k % side) * step, y = (float)(k / side % side) * step;
        sids[k] = 1000000u + (uint32_t)k;
        sboxes[6 * k] = x; sboxes[6 * k + 1] = y; sboxes[6 * k + 2] = 0.0f;
        sboxes[6 * k + 3] = x + step * 0.9f; sboxes[6 * k + 4] = y + step * 0.9f;
        sboxes[6 * k + 5] = k % 4 ? 8.0f : uniform(64.0f, 256.0f);
    }
    ps_link_set_static(link, (size_t)statics, sids, sboxes);
    for (k = 0; k < movers && k < 100; ++k) {
        char name[32];
        snprintf(name, sizeof name, "mover %d", k);
        ps_link_set_name(link, (uint32_t)k, name);
    }
    ps_link_set_meta(link, "game", "\"example_game.c\"");
    ps_link_set_meta(link, "dt", "0.0166667");
    for (k = 0; k < movers; ++k) {
        ids[k] = (uint32_t)k;
        boxes[6 * k] = uniform(0, SIZE); boxes[6 * k + 1] = uniform(0, SIZE); boxes[6 * k + 2] = uniform(0, 128);
        vel[3 * k] = uniform(-6, 6); vel[3 * k + 1] = uniform(-6, 6); vel[3 * k + 2] = 0.0f;
    }
    for (f = 1; f <= frames; ++f) {
        for (k = 0; k < movers; ++k) {
            float *p = boxes + 6 * k, *v = vel + 3 * k;
            for (a = 0; a < 3; ++a) {
                p[a] += v[a];
                if (p[a] < 0.0f || p[a] > SIZE - 32.0f) {
                    v[a] = -v[a];
                    p[a] = p[a] < 0.0f ? 0.0f : SIZE - 32.0f;
                }
            }
            p[3] = p[0] + 32.0f; p[4] = p[1] + 32.0f; p[5] = p[2] + 56.0f;
            awake[k] = (uint8_t)(k % 5 != 0 || (f / 60) % 2 == 0);
        }
        rc = text ? ps_link_send_frame_text(link, (uint32_t)f, (size_t)movers, ids, boxes, awake)
                  : ps_link_send_frame(link, (uint32_t)f, (size_t)movers, ids, boxes, awake);
        if (rc < 0) { fprintf(stderr, "example_game: %s\n", ps_link_last_error()); return 1; }
    }
    fprintf(stderr, "example_game: %lu frames sent, %lu dropped\n", ps_link_frames_sent(link), ps_link_dropped(link));
    rc = ps_link_close(link, 30000);
    free(ids); free(boxes); free(vel); free(awake); free(sids); free(sboxes);
    if (rc) { fprintf(stderr, "example_game: %s\n", ps_link_last_error()); return 1; }
    return 0;
}
