// `parity run`'s fork server: the worker that imported the backend and every scenario module forks the others.
#pragma once

#include <cstdint>

namespace parity {

/// What serve_forks returned to.
enum class Served {
  kWorker,  ///< a new worker, forked
  kClosed,  ///< the server, whose socket the supervisor closed: it ends
  kIdle,    ///< the server, once `wait` requests are served: no other is waiting
};

/// serve_forks's `wait` that serves requests until the supervisor closes the socket.
inline constexpr int kUntilClosed = -1;

/// Serves fork requests (protocol.h, kForkRequest) on the command socket (protocol::kCommandFd): waits for `wait` of
/// them (kUntilClosed: until the supervisor closes it, kClosed in the server), then serves those already waiting and
/// returns kIdle. Returns kWorker in
/// each new worker, a copy of the server (copy-on-write: nothing it imported is imported again) whose commands,
/// replies and output are the descriptors the request carried; the answer tells the supervisor `horizon`
/// (protocol::ForkAnswer). A worker is forked through a middle process that ends at once, so that it becomes the
/// supervisor's child (the supervisor is a child subreaper, process.h) in its own process group, killed with it.
Served serve_forks(std::uint32_t horizon, int wait);

}  // namespace parity
