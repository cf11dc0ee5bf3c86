// probkit: probabilistic data structures at memory speed on CPUs and GPUs.
#pragma once

#include "probkit/backend.hpp"
#include "probkit/bloom_filter.hpp"
#include "probkit/error.hpp"
#include "probkit/hash.hpp"
#include "probkit/hyperloglog.hpp"
#include "probkit/keys.hpp"
#include "probkit/stream.hpp"
