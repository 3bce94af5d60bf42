// serve's dashboard is the one dashboard of every HTTP face
// (src/runtime/dashboard.h); this name stays for the service's route.
#include "src/runtime/dashboard.h"

#include "src/serve/service.h"

namespace toolcache::serve {

std::string_view DashboardHtml() { return runtime::DashboardHtml(); }

}  // namespace toolcache::serve
