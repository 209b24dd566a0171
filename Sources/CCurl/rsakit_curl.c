/* rsakit_curl.c - libcurl loaded on first use; see include/rsakit_curl.h. */
#include "rsakit_curl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_error = "libcurl was not loaded";
static char load_message[512];

/* The sonames of Debian's libcurl3-gnutls, then of any libcurl 4 (the ABI is the same). */
static const char *const sonames[] = {"libcurl-gnutls.so.4", "libcurl.so.4"};

static void load(void) {
    void *library = NULL;
    for (size_t i = 0; library == NULL && i < sizeof sonames / sizeof sonames[0]; i++) {
        library = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) {
        snprintf(load_message, sizeof load_message,
                 "libcurl is not installed (libcurl-gnutls.so.4: install libcurl3-gnutls): %s", dlerror());
        load_error = load_message;
        return;
    }
#define RESOLVE(field, name)                                                                  \
    do {                                                                                      \
        *(void **)&api.field = dlsym(library, name);                                          \
        if (api.field == NULL) {                                                              \
            snprintf(load_message, sizeof load_message, "libcurl has no %s", name);           \
            load_error = load_message;                                                        \
            return;                                                                           \
        }                                                                                     \
    } while (0)
    RESOLVE(global_init, "curl_global_init");
    RESOLVE(easy_init, "curl_easy_init");
    RESOLVE(easy_cleanup, "curl_easy_cleanup");
    RESOLVE(easy_perform, "curl_easy_perform");
    RESOLVE(easy_strerror, "curl_easy_strerror");
    RESOLVE(easy_setopt, "curl_easy_setopt");
    RESOLVE(easy_getinfo, "curl_easy_getinfo");
    RESOLVE(slist_append, "curl_slist_append");
    RESOLVE(slist_free_all, "curl_slist_free_all");
#undef RESOLVE
    /* Process-wide set-up once: curl_easy_init would do it lazily, which is not thread-safe. */
    CURLcode code = api.global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
        snprintf(load_message, sizeof load_message, "curl_global_init failed (%d)", (int)code);
        load_error = load_message;
        return;
    }
    load_error = NULL;
}

const char *rsakit_curl_load(void) {
    pthread_once(&load_once, load);
    return load_error;
}

CURL *rsakit_curl_easy_init(void) { return api.easy_init(); }
void rsakit_curl_easy_cleanup(CURL *handle) { api.easy_cleanup(handle); }
CURLcode rsakit_curl_easy_perform(CURL *handle) { return api.easy_perform(handle); }
const char *rsakit_curl_easy_strerror(CURLcode code) { return api.easy_strerror(code); }

struct curl_slist *rsakit_curl_slist_append(struct curl_slist *list, const char *line) {
    return api.slist_append(list, line);
}

void rsakit_curl_slist_free_all(struct curl_slist *list) { api.slist_free_all(list); }

CURLcode rsakit_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return api.easy_setopt(handle, option, value);
}

CURLcode rsakit_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return api.easy_setopt(handle, option, value);
}

CURLcode rsakit_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return api.easy_setopt(handle, option, value);
}

CURLcode rsakit_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return api.easy_setopt(handle, option, value);
}

CURLcode rsakit_curl_setopt_write_function(CURL *handle, rsakit_curl_write_callback callback) {
    return api.easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

CURLcode rsakit_curl_response_code(CURL *handle, long *code) {
    return api.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

CURLcode rsakit_curl_setopt_header_function(CURL *handle, rsakit_curl_write_callback callback) {
    return api.easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

CURLcode rsakit_curl_setopt_xferinfo_function(CURL *handle, rsakit_curl_xferinfo_callback callback) {
    return api.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

CURLcode rsakit_curl_setopt_opensocket_function(CURL *handle, rsakit_curl_opensocket_callback callback) {
    return api.easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, callback);
}

CURLcode rsakit_curl_setopt_sockopt_function(CURL *handle, rsakit_curl_sockopt_callback callback) {
    return api.easy_setopt(handle, CURLOPT_SOCKOPTFUNCTION, callback);
}

CURLcode rsakit_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return api.easy_setopt(handle, option, value);
}
