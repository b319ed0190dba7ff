// Package model holds weft's plain data: sessions, stored messages,
// operations and the views that applying operations produces.
//
// Nothing here does I/O or knows about storage, screens or protocols; the
// types are shared by the engine (ops), the store and every face.
package model
