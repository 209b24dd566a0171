#include <nettle/sha2.h>
#include <nettle/base64.h>
#include <nettle/version.h>
