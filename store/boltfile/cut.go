package boltfile

import (
	"errors"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
)

// CopyCut writes the pages of a file (f, as Inspect saw it) whose walk
// found page numbers it could not follow (t.Cut) to a new file in dir
// (the system's temporary folder when "", or when dir is yet to be made),
// in which every such page number points instead at an empty leaf page
// added after the others, and whose header pages say so. Reading the
// copy, bbolt meets only a tree: what the damaged pages held is missing
// from it, and the rest reads as it is. It returns the copy's path; the
// caller removes it.
func CopyCut(f io.ReaderAt, rep Report, t Tree, dir string) (string, error) {
	ps, hwm := int64(rep.PageSize), int64(rep.Meta.Pages)
	// The header page in use, to keep its fields but the root and the
	// number of pages.
	var body []byte
	for _, p := range []int64{0, 1} {
		b := make([]byte, PageHeaderLen+metaBodyLen)
		if n, _ := f.ReadAt(b, p*ps); n == len(b) {
			if m := readMeta(b); m.err == "" && m.TxID == rep.Meta.TxID {
				body = b[PageHeaderLen:]
				break
			}
		}
	}
	if body == nil {
		return "", errors.New("its header page cannot be read again")
	}
	out, err := os.CreateTemp(dir, "weft-damaged-*.db")
	if errors.Is(err, fs.ErrNotExist) && dir != "" {
		out, err = os.CreateTemp("", "weft-damaged-*.db") // dir is yet to be made
	}
	if err != nil {
		return "", err
	}
	path := out.Name()
	fail := func(err error) (string, error) {
		_ = out.Close()
		_ = os.Remove(path)
		return "", err
	}
	if _, err := io.Copy(out, io.NewSectionReader(f, 0, hwm*ps)); err != nil {
		return fail(err)
	}
	empty := make([]byte, ps)
	ne.PutUint64(empty, uint64(hwm))
	ne.PutUint16(empty[8:], LeafPageFlag)
	if _, err := out.WriteAt(empty, hwm*ps); err != nil {
		return fail(err)
	}
	for _, at := range t.cuts {
		if _, err := out.WriteAt(ne.AppendUint64(nil, uint64(hwm)), at); err != nil {
			return fail(err)
		}
	}
	if t.rootCut {
		ne.PutUint64(body[16:], uint64(hwm))
	}
	ne.PutUint64(body[40:], uint64(hwm)+1)
	h := fnv.New64a()
	h.Write(body[:56])
	ne.PutUint64(body[56:], h.Sum64())
	for _, p := range []int64{0, 1} {
		hdr := make([]byte, PageHeaderLen)
		ne.PutUint64(hdr, uint64(p))
		ne.PutUint16(hdr[8:], metaPageFlag)
		if _, err := out.WriteAt(append(hdr, body...), p*ps); err != nil {
			return fail(err)
		}
	}
	if err := out.Close(); err != nil {
		_ = os.Remove(path)
		return "", err
	}
	return path, nil
}
