// Umbrella header of libsched.
#pragma once
#include "libsched/version.hpp"
#include "libsched/resources.hpp"
#include "libsched/ids.hpp"
#include "libsched/cluster.hpp"
