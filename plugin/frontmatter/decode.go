package frontmatter

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Why this file exists: yaml.v3 turns a node tree into Go values with a
// duplicate-key check that compares every key of a mapping with every later
// key, so a mapping of n keys costs n² comparisons, and one error message per
// duplicate pair. A 0.4 MB frontmatter of 40,000 keys took seconds. yaml.v3
// has no option to turn the check off, so the conversion from nodes to values
// is done here, with the same results (the same map types, merge keys, alias
// expansion and scalar typing) and a duplicate check through a Go map, which is
// linear. Parsing text into nodes is still yaml.v3's, and that part is linear.

const (
	// maxVisits bounds the nodes one conversion may visit, counting every
	// expansion of an alias, so a document of nested aliases (the "billion
	// laughs") fails fast instead of expanding to gigabytes. A document without
	// aliases never comes near it: a 64 KiB block holds fewer than 64 Ki nodes.
	maxVisits = 200_000
	// maxDuplicateMessages bounds the duplicate-key messages one block
	// produces; the rest are counted, so a block of thousands of repeated keys
	// gives a readable warning.
	maxDuplicateMessages = 10
)

// converter turns yaml.v3 nodes into the values Node.Decode would give for a
// target of type any.
type converter struct {
	visits    int
	expanding map[*yaml.Node]bool // aliases being expanded, to catch a cycle
	dups      []string
	moreDups  int
}

// errExcessiveAliasing uses yaml.v3's words for the same condition.
var errExcessiveAliasing = fmt.Errorf("yaml: document contains excessive aliasing")

// decodeNode converts n (a node below the document) to a Go value. Duplicate
// keys come back as a *yaml.TypeError, as yaml.v3 reports them.
func decodeNode(n *yaml.Node) (any, error) {
	c := &converter{expanding: map[*yaml.Node]bool{}}
	v, err := c.value(n)
	if err != nil {
		return nil, err
	}
	if len(c.dups) > 0 {
		msgs := c.dups
		if c.moreDups > 0 {
			msgs = append(msgs, fmt.Sprintf("and %d more duplicate keys", c.moreDups))
		}
		return nil, &yaml.TypeError{Errors: msgs}
	}
	return v, nil
}

func (c *converter) visit() error {
	c.visits++
	if c.visits > maxVisits {
		return errExcessiveAliasing
	}
	return nil
}

func (c *converter) value(n *yaml.Node) (any, error) {
	if err := c.visit(); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.AliasNode:
		return c.alias(n, c.value)
	case yaml.ScalarNode:
		return scalarValue(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.value(e)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		if isStringMap(n) {
			m := map[string]any{}
			ok, err := c.mapping(n, c.stringKeyed(m), nil)
			if err != nil || !ok {
				return nil, err
			}
			return m, nil
		}
		m := map[any]any{}
		ok, err := c.mapping(n, c.anyKeyed(m), nil)
		if err != nil || !ok {
			return nil, err
		}
		return m, nil
	case yaml.DocumentNode:
		if len(n.Content) == 1 {
			return c.value(n.Content[0])
		}
		return nil, nil
	}
	if n.Kind == 0 && n.IsZero() {
		return nil, nil
	}
	return nil, fmt.Errorf("yaml: cannot decode node with unknown kind %d", n.Kind)
}

// alias expands an alias with f, refusing one that contains itself.
func (c *converter) alias(n *yaml.Node, f func(*yaml.Node) (any, error)) (any, error) {
	if n.Alias == nil {
		return nil, fmt.Errorf("yaml: unknown anchor '%s' referenced", n.Value)
	}
	if c.expanding[n] {
		return nil, fmt.Errorf("yaml: anchor '%s' value contains itself", n.Value)
	}
	c.expanding[n] = true
	defer delete(c.expanding, n)
	return f(n.Alias)
}

// keyed is the map being filled: its key conversion and its store.
type keyed struct {
	key func(*yaml.Node) (k any, ok bool, err error)
	has func(k any) bool
	set func(k, v any)
}

// stringKeyed fills a map whose keys are all strings, converting each key as
// yaml.v3 converts a scalar into a string: its text (null keys are skipped).
func (c *converter) stringKeyed(m map[string]any) keyed {
	return keyed{
		key: func(n *yaml.Node) (any, bool, error) {
			for n.Kind == yaml.AliasNode && n.Alias != nil {
				n = n.Alias
			}
			if n.Kind != yaml.ScalarNode {
				return nil, false, fmt.Errorf("yaml: line %d: invalid map key", n.Line)
			}
			v, err := scalarValue(n)
			if err != nil || v == nil {
				return nil, false, err
			}
			if n.ShortTag() == "!!binary" {
				return v, true, nil
			}
			return n.Value, true, nil
		},
		has: func(k any) bool { _, ok := m[k.(string)]; return ok },
		set: func(k, v any) { m[k.(string)] = v },
	}
}

// anyKeyed fills a map whose keys are typed values, as yaml.v3 gives when a
// key is not a string ("1: x").
func (c *converter) anyKeyed(m map[any]any) keyed {
	return keyed{
		key: func(n *yaml.Node) (any, bool, error) {
			k, err := c.value(n)
			if err != nil {
				return nil, false, err
			}
			switch k.(type) {
			case map[string]any, map[any]any, []any:
				return nil, false, fmt.Errorf("yaml: invalid map key: %#v", k)
			}
			return k, true, nil
		},
		has: func(k any) bool { _, ok := m[k]; return ok },
		set: func(k, v any) { m[k] = v },
	}
}

// mapping fills out from n the way yaml.v3 does: keys in order, then the
// value of the last merge key ("<<"), whose keys never override the mapping's
// own, and earlier merge sources win over later ones. merged is nil at the
// top of a merge and carries the keys already set below it. It reports false,
// with no error, when n has duplicate keys (recorded in c.dups), as yaml.v3
// leaves such a mapping empty and goes on collecting errors.
func (c *converter) mapping(n *yaml.Node, out keyed, merged map[any]bool) (bool, error) {
	if !c.unique(n) {
		return false, nil
	}
	var mergeNode *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if isMerge(kn) {
			mergeNode = vn
			continue
		}
		k, ok, err := out.key(kn)
		if err != nil {
			return false, err
		}
		if !ok {
			continue
		}
		if merged != nil {
			if merged[k] {
				continue
			}
			merged[k] = true
		}
		v, err := c.value(vn)
		if err != nil {
			return false, err
		}
		out.set(k, v)
	}
	if mergeNode == nil {
		return true, nil
	}
	if merged == nil {
		merged = map[any]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if isMerge(n.Content[i]) {
				continue
			}
			if k, ok, err := out.key(n.Content[i]); err == nil && ok {
				merged[k] = true
			}
		}
	}
	return true, c.merge(mergeNode, out, merged)
}

// merge folds a merge key's value (a mapping, an alias of one, or a list of
// those) into out.
func (c *converter) merge(src *yaml.Node, out keyed, merged map[any]bool) error {
	one := func(n *yaml.Node) error {
		if err := c.visit(); err != nil {
			return err
		}
		if n.Kind == yaml.AliasNode {
			_, err := c.alias(n, func(a *yaml.Node) (any, error) {
				if a.Kind != yaml.MappingNode {
					return nil, errMergeWantsMap
				}
				_, err := c.mapping(a, out, merged)
				return nil, err
			})
			return err
		}
		if n.Kind != yaml.MappingNode {
			return errMergeWantsMap
		}
		_, err := c.mapping(n, out, merged)
		return err
	}
	if src.Kind == yaml.SequenceNode {
		for _, e := range src.Content {
			if err := one(e); err != nil {
				return err
			}
		}
		return nil
	}
	return one(src)
}

var errMergeWantsMap = fmt.Errorf("yaml: map merge requires map or sequence of maps as the value")

// unique records n's duplicate keys (same kind, same text, as yaml.v3
// compares them) and reports whether there were none. One pass with a map.
func (c *converter) unique(n *yaml.Node) bool {
	type id struct {
		kind  yaml.Kind
		value string
	}
	first := make(map[id]int, len(n.Content)/2)
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		line, seen := first[id{k.Kind, k.Value}]
		if !seen {
			first[id{k.Kind, k.Value}] = k.Line
			continue
		}
		ok = false
		if len(c.dups) < maxDuplicateMessages {
			c.dups = append(c.dups, fmt.Sprintf("line %d: mapping key %s already defined at line %d", k.Line, strconv.Quote(k.Value), line))
		} else {
			c.moreDups++
		}
	}
	return ok
}

// scalarValue types a scalar as yaml.v3 does for a target of type any. Plain
// strings and nulls, the bulk of any frontmatter, skip yaml.v3's reflection.
func scalarValue(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!str":
		return n.Value, nil
	case "!!null":
		return nil, nil
	}
	var v any
	if err := safeDecode(n, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// isStringMap reports whether every key of n is a string (or a merge key),
// in which case yaml.v3 builds a map[string]any.
func isStringMap(n *yaml.Node) bool {
	for i := 0; i < len(n.Content); i += 2 {
		switch n.Content[i].ShortTag() {
		case "!!str", "!!merge":
		default:
			return false
		}
	}
	return true
}

// isMerge is yaml.v3's test for a merge key.
func isMerge(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "<<" && (n.Tag == "" || n.Tag == "!" || n.ShortTag() == "!!merge")
}
