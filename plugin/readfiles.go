package plugin

import "io/fs"

// fileData is one result of readFiles.
type fileData struct {
	Name string // name in the FS, as asked
	Data []byte
	Err  error
}

// batchReadFS is implemented by a filesystem that can read many files in one
// round trip, as the host's filesystem does.
type batchReadFS interface {
	fs.FS
	readFiles(names []string) []fileData
}

// readFiles reads every named file, in one call when fsys supports it and one
// by one otherwise. Results are in the order of names.
func readFiles(fsys fs.FS, names []string) []fileData {
	if b, ok := fsys.(batchReadFS); ok {
		return b.readFiles(names)
	}
	out := make([]fileData, len(names))
	for i, name := range names {
		data, err := fs.ReadFile(fsys, name)
		out[i] = fileData{Name: name, Data: data, Err: err}
	}
	return out
}
