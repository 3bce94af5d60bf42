// Internal to src/http: the Loop behind the opaque http::Loop handle. Only
// server.cc and client.cc include it (Asio is heavy to compile).
#ifndef TOOLCACHE_SRC_HTTP_ASIO_INTERNAL_H_
#define TOOLCACHE_SRC_HTTP_ASIO_INTERNAL_H_

#include <boost/asio/io_context.hpp>

namespace toolcache::http {

class Loop {
 public:
  boost::asio::io_context ioc{1};  // one thread runs it
};

}  // namespace toolcache::http

#endif  // TOOLCACHE_SRC_HTTP_ASIO_INTERNAL_H_
