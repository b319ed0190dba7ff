// Package ops is the engine's narrow core: the Service, the one API
// every face of weft calls (THE write path, the cache of sessions,
// events, errors), and sessions, edits, reads and navigation through
// it. The engine's rooms (ops/reads, ops/ingest, ops/search, the
// registry ops/tools) and the faces (ops/mcpserver, ops/proxy,
// ops/relay, ops/listen) are built on it, never it on them.
//
// The context proxy (ops/proxy) is a face: its engine (recognising the
// session a request continues, the heads of the threads it sent, the
// provider APIs' shapes) lives there. What it shares with the
// pre-request hook stays here: reading a caller's whole thread
// (ReadThread, CallerMessage) and syncing it into a session
// (SyncPrepare, AppendRead). The hook, apply_context_operations, is a
// Service method that the registry binds, and the registry may import
// no face; so the sync is the core's, and the proxy uses it. The
// proxy's requests are counted here too (CountRequest), for
// list_sessions, which reads them without asking a face.
package ops
