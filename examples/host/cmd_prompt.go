package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rulebroker/rulebroker/host-sdk/rulebook"
)

func cmdPrompt(ctx context.Context, cfg *config, args []string, _ io.Reader, stdout io.Writer) error {
	if len(args) != 0 {
		return &exitError{code: 2, msg: "prompt takes no arguments"}
	}
	res, err := loadRules(ctx, cfg)
	if err != nil {
		return err
	}
	book := newBook(cfg, res)
	prompt := book.SystemPrompt()
	if cfg.json {
		return writeJSON(stdout, struct {
			Prompt   string        `json:"prompt"`
			Warnings []warningJSON `json:"warnings"`
			Notes    []string      `json:"notes"`
		}{prompt, warningsJSON(book.warnings), nonNil(book.notes)})
	}
	// Exactly what the model gets; the warnings are in --json and in `rules`.
	_, err = io.WriteString(stdout, prompt)
	return err
}

func cmdRead(ctx context.Context, cfg *config, args []string, _ io.Reader, stdout io.Writer) error {
	if len(args) != 1 {
		return &exitError{code: 2, msg: "usage: host read rule://NAME"}
	}
	res, err := loadRules(ctx, cfg)
	if err != nil {
		return err
	}
	book := newBook(cfg, res)
	r, err := book.Resolve(args[0])
	if err != nil {
		var unknown *rulebook.UnknownRuleError
		if errors.As(err, &unknown) && cfg.json {
			writeJSON(stdout, struct {
				Error     string   `json:"error"`
				Available []string `json:"available"`
			}{err.Error(), nonNil(unknown.Available)})
		}
		return &exitError{code: 1, msg: err.Error()}
	}
	if cfg.json {
		return writeJSON(stdout, struct {
			URL         string `json:"url"`
			Name        string `json:"name"`
			Path        string `json:"path"`
			ContentType string `json:"contentType"`
			Class       string `json:"class"`
			Activation  string `json:"activation,omitempty"` // native mode only
			Content     string `json:"content"`
		}{r.URL, r.Name, r.Path, r.ContentType, string(r.Class), string(r.Activation), r.Content})
	}
	_, err = fmt.Fprintln(stdout, r.Content)
	return err
}
