// SHA256_Init/_Update/_Final keep their context in a plain struct the caller owns: no
// allocation per hash, which the EVP interface needs (an EVP_MD_CTX for every URL key
// hashed). OpenSSL 3 marks them deprecated but keeps them through the 3.x series; without
// the attributes the import stays warning-free.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
