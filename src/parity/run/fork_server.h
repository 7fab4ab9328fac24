// `parity run`'s fork server: the worker that imported the backend and every scenario module forks the others.
#pragma once

namespace parity {

/// Serves fork requests (protocol.h, kForkRequest) on the command socket (protocol::kCommandFd) until the
/// supervisor closes it. Returns false then, in the server; returns true in each new worker, a copy of the server
/// (copy-on-write: nothing it imported is imported again) whose commands, replies and output are the descriptors
/// the request carried. A worker is forked through a middle process that ends at once, so that it becomes the
/// supervisor's child (the supervisor is a child subreaper, process.h) in its own process group, killed with it.
bool serve_forks();

}  // namespace parity
