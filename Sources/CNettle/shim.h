#include <nettle/sha2.h>
#include <nettle/base64.h>
#include <nettle/gcm.h>
#include <nettle/memops.h>
