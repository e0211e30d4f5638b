package motoserver

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/chatbridge/chat/internal/samtemplate"
)

// CORSRule is one rule of an S3 bucket's CorsConfiguration.
type CORSRule struct {
	AllowedOrigins []string
	AllowedMethods []string
	AllowedHeaders []string
	ExposedHeaders []string
	MaxAge         int
}

// WithCORS makes the proxy's S3 answer CORS by rules, on every bucket,
// instead of by template.yaml's bucket's CorsConfiguration (the default).
func WithCORS(rules []CORSRule) Option {
	return func(o *options) { o.cors, o.corsSet = rules, true }
}

// CORSFromTemplate reads the CORS rules of t's S3 buckets (every local
// bucket is the template's), a parameter referred to by !Ref taking its
// Default, as a local run deploys.
func CORSFromTemplate(t *samtemplate.Template) ([]CORSRule, error) {
	var out []CORSRule
	for _, b := range t.OfType("AWS::S3::Bucket") {
		cfg, _ := t.Resources[b].Properties["CorsConfiguration"].(map[string]any)
		rules, _ := cfg["CorsRules"].([]any)
		for _, r := range rules {
			m, _ := r.(map[string]any)
			var rule CORSRule
			for _, f := range []struct {
				name string
				to   *[]string
			}{{"AllowedOrigins", &rule.AllowedOrigins}, {"AllowedMethods", &rule.AllowedMethods},
				{"AllowedHeaders", &rule.AllowedHeaders}, {"ExposedHeaders", &rule.ExposedHeaders}} {
				vals, _ := m[f.name].([]any)
				for _, v := range vals {
					s, err := templateString(t, v)
					if err != nil {
						return nil, fmt.Errorf("motoserver: %s CORS %s: %w", b, f.name, err)
					}
					*f.to = append(*f.to, s)
				}
			}
			if v, ok := m["MaxAge"]; ok {
				n, err := strconv.Atoi(fmt.Sprint(v))
				if err != nil {
					return nil, fmt.Errorf("motoserver: %s CORS MaxAge %v", b, v)
				}
				rule.MaxAge = n
			}
			out = append(out, rule)
		}
	}
	return out, nil
}

// templateString resolves a literal or a !Ref to a parameter.
func templateString(t *samtemplate.Template, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case map[string]any:
		for _, fn := range []string{"!Ref", "Ref"} {
			if name, ok := x[fn].(string); ok {
				if p, ok := t.Parameters[name]; ok && p.Default != nil {
					return fmt.Sprint(p.Default), nil
				}
			}
		}
	}
	return "", fmt.Errorf("value %v is not implemented", v)
}

// projectCORS is template.yaml's buckets' CORS rules.
func projectCORS() ([]CORSRule, error) {
	t, err := samtemplate.Project()
	if err != nil {
		return nil, err
	}
	return CORSFromTemplate(t)
}

// match returns the first rule that allows origin and method, and every
// header of headers; ok is false when none does.
func (g *s3Gate) match(origin, method string, headers []string) (CORSRule, bool) {
rules:
	for _, r := range g.cors {
		if !anyWildcard(r.AllowedOrigins, origin, false) || !anyWildcard(r.AllowedMethods, method, false) {
			continue
		}
		for _, h := range headers {
			if !anyWildcard(r.AllowedHeaders, h, true) {
				continue rules
			}
		}
		return r, true
	}
	return CORSRule{}, false
}

// anyWildcard matches v against patterns with at most one "*" each, as S3
// matches origins and headers (headers without regard to case).
func anyWildcard(patterns []string, v string, fold bool) bool {
	for _, p := range patterns {
		if fold {
			p, v = strings.ToLower(p), strings.ToLower(v)
		}
		if pre, suf, star := strings.Cut(p, "*"); star {
			if len(v) >= len(pre)+len(suf) && strings.HasPrefix(v, pre) && strings.HasSuffix(v, suf) {
				return true
			}
		} else if p == v {
			return true
		}
	}
	return false
}

// allowOrigin sets the headers every CORS answer of rule carries: "*" for
// a rule open to any origin (S3 then allows no credentials), else the
// origin itself.
func allowOrigin(h http.Header, rule CORSRule, origin string) {
	if len(rule.AllowedOrigins) == 1 && rule.AllowedOrigins[0] == "*" {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Add("Vary", "Origin, Access-Control-Request-Headers, Access-Control-Request-Method")
}

// corsHeaders adds to an actual request's answer (errors included) the
// CORS headers of the rule it matches, if any.
func (g *s3Gate) corsHeaders(h http.Header, r *http.Request) {
	origin := r.Header.Get("Origin")
	rule, ok := g.match(origin, r.Method, nil)
	if !ok {
		return
	}
	allowOrigin(h, rule, origin)
	h.Set("Access-Control-Allow-Methods", strings.Join(rule.AllowedMethods, ", "))
	if len(rule.ExposedHeaders) > 0 {
		h.Set("Access-Control-Expose-Headers", strings.Join(rule.ExposedHeaders, ", "))
	}
	if rule.MaxAge > 0 {
		h.Set("Access-Control-Max-Age", strconv.Itoa(rule.MaxAge))
	}
}

// preflight answers an OPTIONS request as S3 does: 200 with the matching
// rule's headers, or 403 when no rule allows the origin, the method and
// every requested header.
func (g *s3Gate) preflight(w http.ResponseWriter, r *http.Request) {
	origin, method := r.Header.Get("Origin"), r.Header.Get("Access-Control-Request-Method")
	var headers []string
	for _, v := range r.Header.Values("Access-Control-Request-Headers") {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				headers = append(headers, h)
			}
		}
	}
	if method == "" {
		writeS3Error(w, r, http.StatusBadRequest, "BadRequest", "Insufficient information. Origin request header needed.")
		return
	}
	rule, ok := g.match(origin, method, headers)
	if !ok {
		writeS3Error(w, r, http.StatusForbidden, "AccessForbidden",
			"CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.")
		return
	}
	h := w.Header()
	allowOrigin(h, rule, origin)
	h.Set("Access-Control-Allow-Methods", strings.Join(rule.AllowedMethods, ", "))
	if len(headers) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(headers, ", "))
	}
	if len(rule.ExposedHeaders) > 0 {
		h.Set("Access-Control-Expose-Headers", strings.Join(rule.ExposedHeaders, ", "))
	}
	if rule.MaxAge > 0 {
		h.Set("Access-Control-Max-Age", strconv.Itoa(rule.MaxAge))
	}
	w.WriteHeader(http.StatusOK)
}
