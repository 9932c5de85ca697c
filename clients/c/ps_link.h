/* ps_link.h - stream a game's boxes to Partition Studio, live or to a file.
 *
 * One C99 header, no dependency beyond the OS sockets (POSIX or Winsock). In exactly one
 * source file:
 *
 *     #define PS_LINK_IMPLEMENTATION
 *     #include "ps_link.h"
 *
 * (on Windows link ws2_32). The stream is the one docs/live-link.md describes: one header
 * line (static boxes, names, meta), then a binary frame (or a JSON frame line) each frame.
 *
 *     ps_link *link = ps_link_connect("127.0.0.1", 7878, 0);   // or ps_link_save("run.psl")
 *     ps_link_set_static(link, n_static, static_ids, static_boxes);
 *     ps_link_set_name(link, 7, "ogre");
 *     ps_link_set_meta(link, "dt", "0.0166667");               // any JSON value
 *     for (;;) { ...; ps_link_send_frame(link, frame, n, ids, boxes, awake); }
 *     ps_link_close(link, 2000);
 *
 * boxes are 6 floats an object: minx, miny, minz, maxx, maxy, maxz; awake is one byte (0/1)
 * an object (NULL: all awake). Sending never stalls the game: the socket is non-blocking,
 * what it cannot take waits in a buffer of at most buffer_bytes (0: 8 MiB), and a frame that
 * would overflow it is dropped whole and counted (ps_link_dropped). The header is never
 * dropped. In save mode every frame is written; the file appears whole at ps_link_close.
 */
#ifndef PS_LINK_H
#define PS_LINK_H

/* The implementation needs POSIX sockets and nanosleep: under a strict -std=c99 ask for them,
 * before any system header is seen (define _POSIX_C_SOURCE yourself if you include others first). */
#if defined(PS_LINK_IMPLEMENTATION) && !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200112L
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PS_LINK_DEFAULT_PORT 7878

typedef struct ps_link ps_link;

/* Connect to an editor or `app.py listen`; NULL on failure (see ps_link_last_error). */
ps_link *ps_link_connect(const char *host, int port, size_t buffer_bytes);
/* Write the stream to a file instead; NULL on failure. */
ps_link *ps_link_save(const char *path);
/* Before the first frame: static boxes, names and meta entries of the header. 0 on success. */
int ps_link_set_static(ps_link *link, size_t n, const uint32_t *ids, const float *boxes);
int ps_link_set_name(ps_link *link, uint32_t id, const char *name);
int ps_link_set_meta(ps_link *link, const char *key, const char *json_value);
/* Send the header now (the first frame sends it otherwise). 0 on success. */
int ps_link_send_header(ps_link *link);
/* One frame of every dynamic object alive: 1 sent or queued, 0 dropped, -1 error. */
int ps_link_send_frame(ps_link *link, uint32_t frame, size_t n, const uint32_t *ids,
                       const float *boxes, const uint8_t *awake);
int ps_link_send_frame_text(ps_link *link, uint32_t frame, size_t n, const uint32_t *ids,
                            const float *boxes, const uint8_t *awake);
/* Send what is pending, waiting up to timeout_ms; returns the bytes still pending. */
size_t ps_link_flush(ps_link *link, int timeout_ms);
unsigned long ps_link_frames_sent(const ps_link *link);
unsigned long ps_link_dropped(const ps_link *link);
int ps_link_connected(const ps_link *link);
/* Flush (up to timeout_ms), close and free; a save file is moved into place. 0 on success. */
int ps_link_close(ps_link *link, int timeout_ms);
const char *ps_link_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* PS_LINK_H */

#ifdef PS_LINK_IMPLEMENTATION
#ifndef PS_LINK_IMPLEMENTED
#define PS_LINK_IMPLEMENTED

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
typedef SOCKET ps__socket;
#define PS__BAD_SOCKET INVALID_SOCKET
#define ps__close_socket closesocket
static void ps__sleep_ms(int ms) { Sleep((DWORD)ms); }
static int ps__would_block(void) { return WSAGetLastError() == WSAEWOULDBLOCK; }
#else
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
typedef int ps__socket;
#define PS__BAD_SOCKET (-1)
#define ps__close_socket close
static void ps__sleep_ms(int ms) {
    struct timespec t;
    t.tv_sec = ms / 1000;
    t.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&t, NULL);
}
static int ps__would_block(void) { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }
#endif
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

static char ps__error[256];

typedef struct { char *data; size_t len, cap; } ps__buf;

struct ps_link {
    ps__socket sock;
    FILE *file;
    char *path;
    ps__buf pending;        /* bytes waiting for the socket, from pending_at on */
    size_t pending_at;
    size_t limit;
    ps__buf statics, names, meta;
    int header_sent, failed;
    unsigned long frames_sent, dropped;
};

static int ps__reserve(ps__buf *b, size_t extra) {
    size_t need = b->len + extra, cap = b->cap ? b->cap : 256;
    char *grown;
    if (need <= b->cap) return 0;
    while (cap < need) cap *= 2;
    grown = (char *)realloc(b->data, cap);
    if (!grown) { snprintf(ps__error, sizeof ps__error, "out of memory"); return -1; }
    b->data = grown;
    b->cap = cap;
    return 0;
}

static int ps__append(ps__buf *b, const void *data, size_t n) {
    if (ps__reserve(b, n)) return -1;
    memcpy(b->data + b->len, data, n);
    b->len += n;
    return 0;
}

static int ps__printf(ps__buf *b, const char *fmt, double v) {
    char tmp[64];
    int n = snprintf(tmp, sizeof tmp, fmt, v);
    return ps__append(b, tmp, (size_t)n);
}

static void ps__put_u32(unsigned char *out, uint32_t v) {
    out[0] = (unsigned char)v; out[1] = (unsigned char)(v >> 8);
    out[2] = (unsigned char)(v >> 16); out[3] = (unsigned char)(v >> 24);
}

static void ps__put_f32(unsigned char *out, float f) {
    uint32_t v;
    memcpy(&v, &f, 4);
    ps__put_u32(out, v);
}

static int ps__json_string(ps__buf *b, const char *s) {
    if (ps__append(b, "\"", 1)) return -1;
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') { esc[0] = '\\'; esc[1] = (char)c; if (ps__append(b, esc, 2)) return -1; }
        else if (c < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", c); if (ps__append(b, esc, 6)) return -1; }
        else if (ps__append(b, s, 1)) return -1;
    }
    return ps__append(b, "\"", 1);
}

static ps_link *ps__new(void) {
    ps_link *link = (ps_link *)calloc(1, sizeof *link);
    if (!link) { snprintf(ps__error, sizeof ps__error, "out of memory"); return NULL; }
    link->sock = PS__BAD_SOCKET;
    return link;
}

ps_link *ps_link_connect(const char *host, int port, size_t buffer_bytes) {
    struct addrinfo hints, *found = NULL, *ai;
    char service[16];
    ps_link *link;
    ps__socket s = PS__BAD_SOCKET;
    int one = 1, rc;
#ifdef _WIN32
    WSADATA wsa;
    if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) { snprintf(ps__error, sizeof ps__error, "WSAStartup failed"); return NULL; }
#endif
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof service, "%d", port);
    rc = getaddrinfo(host, service, &hints, &found);
    if (rc != 0) { snprintf(ps__error, sizeof ps__error, "cannot resolve %s: %s", host, gai_strerror(rc)); return NULL; }
    for (ai = found; ai; ai = ai->ai_next) {
        s = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (s == PS__BAD_SOCKET) continue;
        if (connect(s, ai->ai_addr, (int)ai->ai_addrlen) == 0) break;
        ps__close_socket(s);
        s = PS__BAD_SOCKET;
    }
    freeaddrinfo(found);
    if (s == PS__BAD_SOCKET) { snprintf(ps__error, sizeof ps__error, "cannot connect to %s:%d", host, port); return NULL; }
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, (const char *)&one, sizeof one);
#ifdef _WIN32
    { u_long nb = 1; ioctlsocket(s, FIONBIO, &nb); }
#else
    fcntl(s, F_SETFL, fcntl(s, F_GETFL, 0) | O_NONBLOCK);
#ifdef SO_NOSIGPIPE
    setsockopt(s, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
#endif
    link = ps__new();
    if (!link) { ps__close_socket(s); return NULL; }
    link->sock = s;
    link->limit = buffer_bytes ? buffer_bytes : (size_t)8 << 20;
    return link;
}

ps_link *ps_link_save(const char *path) {
    ps_link *link = ps__new();
    size_t n = strlen(path);
    if (!link) return NULL;
    link->path = (char *)malloc(n + 6);
    if (!link->path) { free(link); snprintf(ps__error, sizeof ps__error, "out of memory"); return NULL; }
    memcpy(link->path, path, n);
    memcpy(link->path + n, ".part", 6);
    link->file = fopen(link->path, "wb");
    if (!link->file) {
        snprintf(ps__error, sizeof ps__error, "%s: cannot write", path);
        free(link->path); free(link);
        return NULL;
    }
    return link;
}

int ps_link_set_static(ps_link *link, size_t n, const uint32_t *ids, const float *boxes) {
    size_t k;
    int j;
    if (link->header_sent) { snprintf(ps__error, sizeof ps__error, "the header was already sent"); return -1; }
    for (k = 0; k < n; ++k) {
        if (ps__append(&link->statics, link->statics.len ? ",[" : "[", link->statics.len ? 2 : 1)) return -1;
        if (ps__printf(&link->statics, "%.0f", (double)ids[k])) return -1;
        for (j = 0; j < 6; ++j)
            if (ps__printf(&link->statics, ",%.9g", (double)boxes[6 * k + (size_t)j])) return -1;
        if (ps__append(&link->statics, "]", 1)) return -1;
    }
    return 0;
}

int ps_link_set_name(ps_link *link, uint32_t id, const char *name) {
    char key[16];
    if (link->header_sent) { snprintf(ps__error, sizeof ps__error, "the header was already sent"); return -1; }
    snprintf(key, sizeof key, "%lu", (unsigned long)id);
    if (link->names.len && ps__append(&link->names, ",", 1)) return -1;
    if (ps__json_string(&link->names, key) || ps__append(&link->names, ":", 1)) return -1;
    return ps__json_string(&link->names, name);
}

int ps_link_set_meta(ps_link *link, const char *key, const char *json_value) {
    if (link->header_sent) { snprintf(ps__error, sizeof ps__error, "the header was already sent"); return -1; }
    if (ps__append(&link->meta, ",", 1) || ps__json_string(&link->meta, key)) return -1;
    if (ps__append(&link->meta, ":", 1)) return -1;
    return ps__append(&link->meta, json_value, strlen(json_value));
}

size_t ps_link_flush(ps_link *link, int timeout_ms) {
    int waited = 0;
    while (link->sock != PS__BAD_SOCKET && !link->failed && link->pending.len > link->pending_at) {
        size_t left = link->pending.len - link->pending_at;
        int chunk = left > (1u << 30) ? (1 << 30) : (int)left;
        long sent = (long)send(link->sock, link->pending.data + link->pending_at, chunk, MSG_NOSIGNAL);
        if (sent > 0) {
            link->pending_at += (size_t)sent;
            continue;
        }
        if (sent < 0 && !ps__would_block()) {
            link->failed = 1;  /* the editor went away: frames are dropped from now on */
            snprintf(ps__error, sizeof ps__error, "the connection was closed");
            break;
        }
        if (waited >= timeout_ms) break;
        ps__sleep_ms(1);
        ++waited;
    }
    if (link->pending_at == link->pending.len) link->pending.len = link->pending_at = 0;
    return link->pending.len - link->pending_at;
}

/* Queue (or write) bytes; a droppable frame that would overflow the buffer is dropped. */
static int ps__write(ps_link *link, const void *data, size_t n, int droppable) {
    if (link->file) {
        if (fwrite(data, 1, n, link->file) != n) { snprintf(ps__error, sizeof ps__error, "write failed"); return -1; }
        link->frames_sent += (unsigned long)droppable;
        return 1;
    }
    ps_link_flush(link, 0);
    if (link->failed || (droppable && link->pending.len - link->pending_at + n > link->limit)) {
        link->dropped += (unsigned long)droppable;
        return 0;
    }
    if (link->pending_at && link->pending.len + n > link->pending.cap) {  /* compact before growing */
        memmove(link->pending.data, link->pending.data + link->pending_at, link->pending.len - link->pending_at);
        link->pending.len -= link->pending_at;
        link->pending_at = 0;
    }
    if (ps__append(&link->pending, data, n)) return -1;
    link->frames_sent += (unsigned long)droppable;
    ps_link_flush(link, 0);
    return 1;
}

int ps_link_send_header(ps_link *link) {
    ps__buf h = {NULL, 0, 0};
    int rc;
    if (link->header_sent) return 0;
    link->header_sent = 1;
    rc = ps__append(&h, "{\"static\":[", 11) || ps__append(&h, link->statics.data, link->statics.len)
         || ps__append(&h, "]", 1);
    if (!rc && (link->names.len || link->meta.len)) {
        rc = ps__append(&h, ",\"meta\":{\"names\":{", 18) || ps__append(&h, link->names.data, link->names.len)
             || ps__append(&h, "}", 1) || ps__append(&h, link->meta.data, link->meta.len) || ps__append(&h, "}", 1);
    }
    rc = rc || ps__append(&h, "}\n", 2);
    if (!rc) rc = ps__write(link, h.data, h.len, 0) < 0;
    free(h.data);
    return rc ? -1 : 0;
}

int ps_link_send_frame(ps_link *link, uint32_t frame, size_t n, const uint32_t *ids,
                       const float *boxes, const uint8_t *awake) {
    size_t bytes = 20 + n * 29, k;
    unsigned char *out, *p;
    int rc;
    if (ps_link_send_header(link)) return -1;
    out = (unsigned char *)malloc(bytes);
    if (!out) { snprintf(ps__error, sizeof ps__error, "out of memory"); return -1; }
    memcpy(out, "\0PSB", 4);
    ps__put_u32(out + 4, (uint32_t)(12 + n * 29));
    ps__put_u32(out + 8, frame);
    ps__put_u32(out + 12, (uint32_t)n);
    ps__put_u32(out + 16, 0);
    p = out + 20;
    for (k = 0; k < n; ++k, p += 4) ps__put_u32(p, ids[k]);
    for (k = 0; k < 6 * n; ++k, p += 4) ps__put_f32(p, boxes[k]);
    for (k = 0; k < n; ++k) *p++ = (unsigned char)(awake ? (awake[k] != 0) : 1);
    rc = ps__write(link, out, bytes, 1);
    free(out);
    return rc;
}

int ps_link_send_frame_text(ps_link *link, uint32_t frame, size_t n, const uint32_t *ids,
                            const float *boxes, const uint8_t *awake) {
    ps__buf line = {NULL, 0, 0};
    size_t k;
    int j, rc = 0;
    if (ps_link_send_header(link)) return -1;
    rc = ps__printf(&line, "{\"frame\":%.0f,\"objects\":[", (double)frame);
    for (k = 0; k < n && !rc; ++k) {
        rc = ps__printf(&line, k ? ",[%.0f" : "[%.0f", (double)ids[k]);
        for (j = 0; j < 6 && !rc; ++j) rc = ps__printf(&line, ",%.9g", (double)boxes[6 * k + (size_t)j]);
        if (!rc) rc = ps__append(&line, (awake && !awake[k]) ? ",false]" : ",true]", (awake && !awake[k]) ? 7 : 6);
    }
    if (!rc) rc = ps__append(&line, "]}\n", 3);
    rc = rc ? -1 : ps__write(link, line.data, line.len, 1);
    free(line.data);
    return rc;
}

unsigned long ps_link_frames_sent(const ps_link *link) { return link->frames_sent; }
unsigned long ps_link_dropped(const ps_link *link) { return link->dropped; }
int ps_link_connected(const ps_link *link) { return !link->failed; }
const char *ps_link_last_error(void) { return ps__error; }

/* Half-close (the editor reads the end of the stream), then read until the editor closes its
 * side or timeout_ms pass: a game that connects again right after closing is then taken as the
 * next game, not refused as a second one while the editor still reads the first. The editor
 * never writes back; anything read is discarded. */
static void ps__wait_for_peer_close(ps__socket sock, int timeout_ms) {
    char scratch[256];
    int waited = 0;
#ifdef _WIN32
    if (shutdown(sock, SD_SEND) != 0) return;
#else
    if (shutdown(sock, SHUT_WR) != 0) return;
#endif
    while (waited < timeout_ms) {
        int got = (int)recv(sock, scratch, (int)sizeof scratch, 0);
        if (got == 0) return;                          /* the editor closed its side */
        if (got < 0 && !ps__would_block()) return;     /* reset or gone: nothing to wait for */
        if (got < 0) { ps__sleep_ms(5); waited += 5; }
    }
}

int ps_link_close(ps_link *link, int timeout_ms) {
    int rc = 0;
    if (!link) return -1;
    if (link->sock != PS__BAD_SOCKET) {
        ps_link_flush(link, timeout_ms);
        rc = link->failed ? -1 : 0;
        if (!link->failed) ps__wait_for_peer_close(link->sock, timeout_ms);
        ps__close_socket(link->sock);
    }
    if (link->file) {
        size_t n = strlen(link->path) - 5;
        char *final = (char *)malloc(n + 1);
        rc = ps_link_send_header(link);
        if (fflush(link->file) != 0) rc = -1;
#ifndef _WIN32
        if (!rc && fsync(fileno(link->file)) != 0) rc = -1;
#endif
        if (fclose(link->file) != 0) rc = -1;
        if (final) {
            memcpy(final, link->path, n);
            final[n] = 0;
#ifdef _WIN32
            if (!rc && !MoveFileExA(link->path, final, MOVEFILE_REPLACE_EXISTING)) rc = -1;
#else
            if (!rc && rename(link->path, final) != 0) rc = -1;
#endif
            free(final);
        } else rc = -1;
        if (rc) snprintf(ps__error, sizeof ps__error, "could not finish the save file");
    }
    free(link->pending.data); free(link->statics.data); free(link->names.data); free(link->meta.data);
    free(link->path);
    free(link);
    return rc;
}

#endif /* PS_LINK_IMPLEMENTED */
#endif /* PS_LINK_IMPLEMENTATION */
