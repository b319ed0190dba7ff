package boltstore

import "bytes"

// Settings of the whole file (the memory policies new sessions get) are
// kept in the meta bucket, each under "setting/" and its name.
const settingPrefix = "setting/"

// Setting returns the value of the file's setting name, or nil when it
// is not set.
func (t *Tx) Setting(name string) []byte {
	b := t.bucket(bktMeta)
	if b == nil {
		return nil
	}
	return bytes.Clone(b.Get([]byte(settingPrefix + name)))
}

// PutSetting sets the file's setting name to value; an empty value
// removes it.
func (t *Tx) PutSetting(name string, value []byte) error {
	b, err := t.wbucket(bktMeta)
	if err != nil {
		return err
	}
	if len(value) == 0 {
		return b.Delete([]byte(settingPrefix + name))
	}
	return b.Put([]byte(settingPrefix+name), bytes.Clone(value))
}

// Settings calls fn for each of the file's settings, in name order.
func (t *Tx) Settings(fn func(name string, value []byte) error) error {
	b := t.bucket(bktMeta)
	if b == nil {
		return nil
	}
	c := b.Cursor()
	prefix := []byte(settingPrefix)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(string(k[len(prefix):]), bytes.Clone(v)); err != nil {
			return err
		}
	}
	return nil
}
