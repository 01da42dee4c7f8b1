package plugin

import "io/fs"

// FileData is one result of ReadFiles.
type FileData struct {
	Name string // name in the FS, as asked
	Data []byte
	Err  error
}

// BatchReadFS is implemented by a filesystem that can read many files in one
// round trip, as the host's filesystem does.
type BatchReadFS interface {
	fs.FS
	ReadFiles(names []string) []FileData
}

// ReadFiles reads every named file, in one call when fsys supports it and one
// by one otherwise. Results are in the order of names.
func ReadFiles(fsys fs.FS, names []string) []FileData {
	if b, ok := fsys.(BatchReadFS); ok {
		return b.ReadFiles(names)
	}
	out := make([]FileData, len(names))
	for i, name := range names {
		data, err := fs.ReadFile(fsys, name)
		out[i] = FileData{Name: name, Data: data, Err: err}
	}
	return out
}
