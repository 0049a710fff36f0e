/* The kernel trace of a runner, recorded by CUPTI from inside the CUDA driver.

   Loaded by the CUDA driver itself (CUDA_INJECTION64_PATH) when the runner's first CUDA call
   initialises it, before any candidate code is imported; the candidate's Python can neither see
   nor reach this library's state (no ctypes, no native code: the screen and the audit hook).
   It records every kernel launch (CUPTI activity, CONCURRENT_KERNEL) between the judge's start
   and end commands and answers each end with the kernels summed by name. Its answers go to the
   judge over a pipe, each frame sealed with HMAC-SHA256 under a key this library read once
   from a pipe at its start and closed, so that nothing written there by anyone else passes as
   the trace; frames carry a sequence number, so none can be replayed or dropped unnoticed.

   Built on the GPU host by kernel_trace_build.py against the CUPTI headers of the CUPTI
   library the process uses (an activity record's layout is its CUPTI's), with
   -DKGYM_KERNEL_RECORD=<its kernel record type> and -DKGYM_LIBCRYPTO="<libcrypto path>".

   Protocol (KGYM_KERNEL_TRACE_FDS="key,command,answer" in the environment at start):
     at start, the answer "ready" (or "error <what>") is sent;
     a command is its letter, a nonce of 16 bytes and the HMAC of "C", the command's number (8
     bytes, little-endian, 0 for the first), the letter and the nonce: the candidate, which
     shares this process, can write into the command pipe but cannot seal a command. A command
     that fails its seal, or comes out of order, is answered "error ..." and ends the service;
     commands alternate, S then E (the graded calls' trace, then the timed calls'), and each
     answer names the command's nonce (hex):
     command 'S': enable kernel activity, answer "started <nonce>";
     command 'E': flush and disable, answer "kernels <nonce> <records> <dropped>\n" then one line
                  per kernel name: "<calls>\t<total ns>\t<name>\n" (names demangled, at most 200
                  characters; past MAX_NAMES names the rest are summed under "<other kernels>").
   A frame is "KGTR", the payload's length (4 bytes, little-endian), the payload, and the HMAC
   of the sequence number (8 bytes, little-endian, 0 for the first frame) and the payload. */

#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef KGYM_KERNEL_RECORD
#error "KGYM_KERNEL_RECORD names the CUPTI kernel record type of the headers built against"
#endif
#ifndef KGYM_LIBCRYPTO
#define KGYM_LIBCRYPTO "libcrypto.so.3"
#endif

#define KEY_BYTES 32
#define MAC_BYTES 32
#define NONCE_BYTES 16
#define COMMAND_BYTES (1 + NONCE_BYTES + MAC_BYTES)
#define MAX_NAMES 512
#define NAME_CHARS 200
#define BUFFER_BYTES (8u << 20)

/* libcrypto's one-shot HMAC and its SHA-256, found at run time: the library links nothing but
   CUPTI, and Python's own hashlib has loaded libcrypto into the process already. */
typedef const void *(*evp_md_fn)(void);
typedef unsigned char *(*hmac_fn)(const void *, const void *, int, const unsigned char *, size_t,
                                  unsigned char *, unsigned int *);
static evp_md_fn sha256;
static hmac_fn hmac;

/* __cxa_demangle, from the C++ runtime torch has loaded: kernel names of C++ libraries come
   mangled, and the judge reads them as the profiler would show them. */
typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
static demangle_fn demangle;

static unsigned char key[KEY_BYTES];
static int command_fd = -1;
static int answer_fd = -1;
static uint64_t sequence;  /* frames sent */
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;

struct entry {
  char *name;
  uint64_t calls;
  uint64_t total_ns;
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry table[MAX_NAMES];
static int used;
static struct entry other = {"<other kernels>", 0, 0};
static uint64_t records;

static void write_all(int fd, const void *data, size_t size) {
  const char *p = data;
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return; /* the judge has gone, or the pipe was taken: the judge sees no frame */
    p += n;
    size -= (size_t)n;
  }
}

static void send_frame(const char *payload, size_t size) {
  pthread_mutex_lock(&send_lock);
  unsigned char header[8] = {'K', 'G', 'T', 'R'};
  unsigned char mac[MAC_BYTES];
  unsigned int mac_size = MAC_BYTES;
  unsigned char *sealed = malloc(8 + size);
  if (sealed == NULL) {
    pthread_mutex_unlock(&send_lock);
    return;
  }
  for (int i = 0; i < 8; ++i) sealed[i] = (unsigned char)(sequence >> (8 * i));
  memcpy(sealed + 8, payload, size);
  if (hmac(sha256(), key, KEY_BYTES, sealed, 8 + size, mac, &mac_size) == NULL) {
    free(sealed);
    pthread_mutex_unlock(&send_lock);
    return;
  }
  free(sealed);
  for (int i = 0; i < 4; ++i) header[4 + i] = (unsigned char)(size >> (8 * i));
  write_all(answer_fd, header, sizeof header);
  write_all(answer_fd, payload, size);
  write_all(answer_fd, mac, MAC_BYTES);
  ++sequence;
  pthread_mutex_unlock(&send_lock);
}

static void send_text(const char *text) { send_frame(text, strlen(text)); }

static struct entry *entry_for(const char *name) {
  for (int i = 0; i < used; ++i)
    if (strcmp(table[i].name, name) == 0) return &table[i];
  if (used == MAX_NAMES) return &other;
  table[used].name = strdup(name);
  if (table[used].name == NULL) return &other;
  table[used].calls = 0;
  table[used].total_ns = 0;
  return &table[used++];
}

static void clear_table(void) {
  for (int i = 0; i < used; ++i) free(table[i].name);
  used = 0;
  other.calls = 0;
  other.total_ns = 0;
  records = 0;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *buffer = aligned_alloc(8, BUFFER_BYTES);
  *size = *buffer == NULL ? 0 : BUFFER_BYTES;
  *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid) {
  (void)context;
  (void)stream;
  (void)size;
  CUpti_Activity *record = NULL;
  pthread_mutex_lock(&table_lock);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    const KGYM_KERNEL_RECORD *kernel = (const KGYM_KERNEL_RECORD *)record;
    struct entry *entry = entry_for(kernel->name != NULL ? kernel->name : "?");
    entry->calls += 1;
    if (kernel->end > kernel->start) entry->total_ns += kernel->end - kernel->start;
    ++records;
  }
  pthread_mutex_unlock(&table_lock);
  free(buffer);
}

/* One kernel's line: its name demangled where it is a C++ name, cut at NAME_CHARS, with no
   tab or line break in it. */
static size_t format_entry(char *out, size_t room, const struct entry *entry) {
  char *plain = NULL;
  int status = 0;
  if (demangle != NULL && strncmp(entry->name, "_Z", 2) == 0)
    plain = demangle(entry->name, NULL, NULL, &status);
  const char *name = plain != NULL && status == 0 ? plain : entry->name;
  char cut[NAME_CHARS + 1];
  snprintf(cut, sizeof cut, "%s", name);
  for (char *c = cut; *c; ++c)
    if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
  free(plain);
  int n = snprintf(out, room, "%llu\t%llu\t%s\n", (unsigned long long)entry->calls,
                   (unsigned long long)entry->total_ns, cut);
  return n < 0 ? 0 : ((size_t)n < room ? (size_t)n : room - 1);
}

static void answer_kernels(const char *nonce) {
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
  pthread_mutex_lock(&table_lock);
  size_t room = 96 + (size_t)(used + 1) * (NAME_CHARS + 48);
  char *text = malloc(room);
  if (text == NULL) {
    pthread_mutex_unlock(&table_lock);
    send_text("error out of memory");
    return;
  }
  size_t at = (size_t)snprintf(text, room, "kernels %s %llu %llu\n", nonce,
                               (unsigned long long)records, (unsigned long long)dropped);
  for (int i = 0; i < used; ++i) at += format_entry(text + at, room - at, &table[i]);
  if (other.calls > 0) at += format_entry(text + at, room - at, &other);
  pthread_mutex_unlock(&table_lock);
  send_frame(text, at);
  free(text);
}

static int read_exact(int fd, unsigned char *into, size_t size) {
  size_t have = 0;
  while (have < size) {
    ssize_t n = read(fd, into + have, size - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    have += (size_t)n;
  }
  return 1;
}

/* Whether a command carries the judge's seal for its place in the order. */
static int sealed_by_the_judge(const unsigned char *command, uint64_t number) {
  unsigned char body[1 + 8 + 1 + NONCE_BYTES];
  body[0] = 'C';
  for (int i = 0; i < 8; ++i) body[1 + i] = (unsigned char)(number >> (8 * i));
  memcpy(body + 9, command, 1 + NONCE_BYTES);
  unsigned char mac[MAC_BYTES];
  unsigned int mac_size = MAC_BYTES;
  if (hmac(sha256(), key, KEY_BYTES, body, sizeof body, mac, &mac_size) == NULL) return 0;
  unsigned char differ = 0;
  for (int i = 0; i < MAC_BYTES; ++i) differ |= (unsigned char)(mac[i] ^ command[1 + NONCE_BYTES + i]);
  return differ == 0;
}

static void *serve_commands(void *unused) {
  (void)unused;
  static const char hex[] = "0123456789abcdef";
  for (uint64_t number = 0;; ++number) {
    unsigned char command[COMMAND_BYTES];
    if (!read_exact(command_fd, command, sizeof command)) return NULL; /* the judge has gone */
    if (!sealed_by_the_judge(command, number)) {
      send_text("error a command that fails its seal");
      return NULL;
    }
    char nonce[2 * NONCE_BYTES + 1];
    for (int i = 0; i < NONCE_BYTES; ++i) {
      nonce[2 * i] = hex[command[1 + i] >> 4];
      nonce[2 * i + 1] = hex[command[1 + i] & 15];
    }
    nonce[2 * NONCE_BYTES] = 0;
    char text[320];
    /* Starts and ends alternate, from a start: the graded calls' trace, then the window's. */
    if (command[0] == 'S' && number % 2 == 0) {
      pthread_mutex_lock(&table_lock);
      clear_table();
      pthread_mutex_unlock(&table_lock);
      CUptiResult enabled = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      if (enabled == CUPTI_SUCCESS) {
        snprintf(text, sizeof text, "started %s", nonce);
      } else {
        const char *what = NULL;
        cuptiGetResultString(enabled, &what);
        snprintf(text, sizeof text, "error %s cuptiActivityEnable: %s", nonce, what ? what : "?");
      }
      send_text(text);
    } else if (command[0] == 'E' && number % 2 == 1) {
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      answer_kernels(nonce);
    } else {
      snprintf(text, sizeof text, "error %s a command out of order", nonce);
      send_text(text);
      return NULL;
    }
  }
}

static int parse_fds(const char *text, int *fds) {
  return text != NULL && sscanf(text, "%d,%d,%d", &fds[0], &fds[1], &fds[2]) == 3 &&
         fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0;
}

static void CUPTIAPI ignore_callbacks(void *data, CUpti_CallbackDomain domain,
                                      CUpti_CallbackId id, const void *info) {
  (void)data;
  (void)domain;
  (void)id;
  (void)info;
}

/* Called by the CUDA driver once, at its initialisation, in the runner's main thread. A
   process without the descriptors (a child that inherited the environment only) records
   nothing. */
__attribute__((visibility("default"))) int InitializeInjection(void) {
  int fds[3];
  const char *spec = getenv("KGYM_KERNEL_TRACE_FDS");
  if (!parse_fds(spec, fds)) return 1;
  unsetenv("KGYM_KERNEL_TRACE_FDS");
  int keyed = read_exact(fds[0], key, KEY_BYTES);
  close(fds[0]);
  if (!keyed) return 1;
  command_fd = fds[1];
  answer_fd = fds[2];
  void *crypto = dlopen(KGYM_LIBCRYPTO, RTLD_NOW | RTLD_LOCAL);
  if (crypto != NULL) {
    sha256 = (evp_md_fn)dlsym(crypto, "EVP_sha256");
    hmac = (hmac_fn)dlsym(crypto, "HMAC");
  }
  if (sha256 == NULL || hmac == NULL) return 1; /* no frame can be sealed: the judge waits */
  demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
  CUptiResult registered = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (registered != CUPTI_SUCCESS) {
    const char *what = NULL;
    cuptiGetResultString(registered, &what);
    char text[256];
    snprintf(text, sizeof text, "error cuptiActivityRegisterCallbacks: %s", what ? what : "?");
    send_text(text);
    return 1;
  }
  /* The one CUPTI subscriber a process may have: a second client (torch's profiler, Triton's
     Proton) cannot subscribe beside the trace. Where it fails, the trace still records. */
  CUpti_SubscriberHandle subscriber;
  (void)cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)ignore_callbacks, NULL);
  send_text("ready");
  pthread_t thread;
  if (pthread_create(&thread, NULL, serve_commands, NULL) != 0) {
    send_text("error no thread for the judge's commands");
    return 1;
  }
  pthread_detach(thread);
  return 1;
}
