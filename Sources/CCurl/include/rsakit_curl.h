/*
 * rsakit_curl.h - libcurl (libcurl3-gnutls, headers from libcurl4-gnutls-dev) for RSAKit's
 * HTTP client (OCSP, RFC 6960 Appendix A; CRLs from distribution points), in
 * Sources/RSAKitPKI/HTTP/, and for the HTTPS client, Sources/RSAKitTLS/HTTPS/ (plain HTTP
 * over rsakit's TLS relay: that client never enables libcurl's own TLS).
 *
 * libcurl is loaded when HTTP is first needed (dlopen of libcurl-gnutls.so.4), not linked:
 * linked, its dependencies (Kerberos, LDAP, SSH, RTMP, HTTP/2, brotli, zstd: 20 libraries)
 * cost every rsakit process about 3 ms of start-up, although only trust evaluation with
 * OCSP or --fetch-crls ever uses it. curl_easy_setopt and curl_easy_getinfo are variadic,
 * which Swift cannot call: the setters below fix the argument type per option kind.
 */
#ifndef RSAKIT_CURL_H
#define RSAKIT_CURL_H

#include <stddef.h>
#include <curl/curl.h>

/* Load libcurl and run curl_global_init, once per process (thread-safe). Returns NULL when
 * libcurl is usable, else a sentence saying why not (static storage). */
const char *rsakit_curl_load(void);

/* The libcurl calls RSAKit makes; each requires a successful rsakit_curl_load first. */
CURL *rsakit_curl_easy_init(void);
void rsakit_curl_easy_cleanup(CURL *handle);
CURLcode rsakit_curl_easy_perform(CURL *handle);
const char *rsakit_curl_easy_strerror(CURLcode code);
struct curl_slist *rsakit_curl_slist_append(struct curl_slist *list, const char *line);
void rsakit_curl_slist_free_all(struct curl_slist *list);

CURLcode rsakit_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode rsakit_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode rsakit_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode rsakit_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);

typedef size_t (*rsakit_curl_write_callback)(char *data, size_t size, size_t count, void *context);
CURLcode rsakit_curl_setopt_write_function(CURL *handle, rsakit_curl_write_callback callback);

/* Callbacks of the HTTPS client (RSAKitTLS), which gives libcurl a socket already connected
 * to rsakit's own TLS relay instead of letting it connect (and never lets it do TLS). */
CURLcode rsakit_curl_setopt_header_function(CURL *handle, rsakit_curl_write_callback callback);
typedef int (*rsakit_curl_xferinfo_callback)(void *context, curl_off_t download_total, curl_off_t download_now,
                                             curl_off_t upload_total, curl_off_t upload_now);
CURLcode rsakit_curl_setopt_xferinfo_function(CURL *handle, rsakit_curl_xferinfo_callback callback);
typedef curl_socket_t (*rsakit_curl_opensocket_callback)(void *context, curlsocktype purpose, struct curl_sockaddr *address);
CURLcode rsakit_curl_setopt_opensocket_function(CURL *handle, rsakit_curl_opensocket_callback callback);
typedef int (*rsakit_curl_sockopt_callback)(void *context, curl_socket_t socket, curlsocktype purpose);
CURLcode rsakit_curl_setopt_sockopt_function(CURL *handle, rsakit_curl_sockopt_callback callback);
CURLcode rsakit_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value);

/* The last response's HTTP status (CURLINFO_RESPONSE_CODE). */
CURLcode rsakit_curl_response_code(CURL *handle, long *code);

#endif
