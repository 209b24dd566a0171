// libcurl (libcurl4-gnutls-dev) for RSAKit's HTTP client: OCSP requests (RFC 6960 Appendix A).
// Only Sources/RSAKit/HTTP/ imports this module. curl_easy_setopt and curl_easy_getinfo are
// variadic, which Swift cannot call: these wrappers fix the argument type per option kind.
#ifndef RSAKIT_CCURL_SHIM_H
#define RSAKIT_CCURL_SHIM_H

#include <curl/curl.h>

static inline CURLcode rsakit_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode rsakit_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode rsakit_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode rsakit_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*rsakit_curl_write_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode rsakit_curl_setopt_write_function(CURL *handle, rsakit_curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLcode rsakit_curl_response_code(CURL *handle, long *code) {
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

#endif
