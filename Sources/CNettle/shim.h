#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <nettle/sha3.h>
#include <nettle/nettle-meta.h>
#include <nettle/base64.h>
#include <nettle/gcm.h>
#include <nettle/memops.h>
#include <nettle/version.h>
