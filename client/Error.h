// The client's errors as its users include them: Error, NfsException and
// ClientErrc. Defined in client/base/, below every layer of the client, so
// that the layers and the public API share them without including each other.
#pragma once

#include "client/base/Error.h"
