package broker

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// BinaryPrefix starts the file name of every third-party provider binary.
const BinaryPrefix = "rulebroker-provider-"

// PluginPathEnv lists extra plugin directories, colon-separated.
const PluginPathEnv = "RULEBROKER_PLUGIN_PATH"

// PluginDirs returns the directories searched for third-party providers, in
// order: explicit ones (e.g. --plugin-dir), then $RULEBROKER_PLUGIN_PATH, then
// ~/.rulebroker/plugins. Empty entries and repeats are dropped.
func PluginDirs(explicit []string, pluginPath, home string) []string {
	var dirs []string
	seen := map[string]bool{}
	add := func(d string) {
		if d == "" {
			return
		}
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, d := range explicit {
		add(d)
	}
	for _, d := range filepath.SplitList(pluginPath) {
		add(d)
	}
	if home != "" {
		add(filepath.Join(home, ".rulebroker", "plugins"))
	}
	return dirs
}

// candidate is a provider binary found in a plugin directory.
type candidate struct {
	path string
}

// findBinaries lists rulebroker-provider-* files in dirs: directory order, then
// file name. A name found in an earlier directory hides the same name later,
// as on $PATH; the hidden ones are returned so the host can say so.
// A missing directory is not an error: most users have none.
func findBinaries(dirs []string) (found []candidate, hidden []string, problems []error) {
	seen := map[string]string{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !os.IsNotExist(err) {
				problems = append(problems, err)
			}
			continue
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), BinaryPrefix) && !e.IsDir() {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, name := range names {
			path := filepath.Join(dir, name)
			if _, dup := seen[name]; dup {
				hidden = append(hidden, path)
				continue
			}
			seen[name] = path
			found = append(found, candidate{path: path})
		}
	}
	return found, hidden, problems
}
