package rulebook_test

import (
	"fmt"

	"github.com/rulebroker/rulebroker/host-sdk/rulebook"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/shared"
)

// The merged rules become the system prompt's rules section: an always rule's
// content verbatim, a rule with a description listed for the model to read
// through rule:// when it is relevant.
func ExampleBook_SystemPrompt() {
	book := rulebook.New([]ruleset.Rule{
		{Rule: shared.Rule{Name: "style", Path: "/repo/.xcsh/rules/style.md", Content: "Use tabs.", AlwaysApply: true}, Provider: "native"},
		{Rule: shared.Rule{Name: "db", Path: "/repo/.cursor/rules/db.mdc", Content: "Use the query builder.", Description: "Database access"}, Provider: "cursor"},
	})
	fmt.Println(book.SystemPrompt())
	res, _ := book.Resolve("rule://db")
	fmt.Println("rule://db →", res.Content)
	// Output:
	// Use tabs.
	//
	// # Rules
	//
	// Read rule://<name> when working in a rule's matching domain. Each rule below is listed by name and description; its full content is only available by reading its rule:// URL. Globs say which files a rule is about; they are a hint, not a filter.
	//
	// <rules>
	//   <rule name="db">
	//     <description>Database access</description>
	//   </rule>
	// </rules>
	//
	// rule://db → Use the query builder.
}
