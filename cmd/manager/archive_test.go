package main

import (
	"strings"
	"testing"
)

// The archive's flags: none is no archive; an endpoint and a bucket make one; anything half-given
// is refused naming the flag to add or correct.
func TestArchiveFlags(t *testing.T) {
	o := validOptions()
	if err := o.validate(); err != nil || o.archive.enabled() {
		t.Errorf("no archive flags: validate() = %v, enabled %v", err, o.archive.enabled())
	}
	o.archive = archiveOptions{endpoint: "https://s3.example.com", bucket: "results", prefix: "vmbench/prod", region: "eu-west-3"}
	if err := o.validate(); err != nil || !o.archive.enabled() {
		t.Errorf("endpoint and bucket: validate() = %v, enabled %v", err, o.archive.enabled())
	}
	for _, tc := range []struct {
		archive archiveOptions
		want    string
	}{
		{archiveOptions{endpoint: "https://s3.example.com"}, "--archive-s3-endpoint=\"https://s3.example.com\" is set without --archive-s3-bucket"},
		{archiveOptions{bucket: "results"}, "--archive-s3-bucket=\"results\" is set without --archive-s3-endpoint"},
		{archiveOptions{prefix: "vmbench"}, "--archive-s3-prefix, --archive-s3-ca-file or --archive-s3-credentials-dir is set without"},
		{archiveOptions{credentialsDir: "/etc/vmbench/archive-credentials"}, "--archive-s3-prefix, --archive-s3-ca-file or --archive-s3-credentials-dir is set without"},
		{archiveOptions{endpoint: "s3.example.com:9000", bucket: "results"}, "is not an http:// or https:// URL"},
		{archiveOptions{endpoint: "https://s3.example.com", bucket: "Results"}, "is not an S3 bucket name"},
		{archiveOptions{endpoint: "https://s3.example.com", bucket: "results", prefix: "/vmbench"}, "--archive-s3-prefix=\"/vmbench\": give the prefix without a leading '/'"},
		{archiveOptions{endpoint: "https://s3.example.com", bucket: "results", caFile: "/nonexistent/ca.crt"}, "reading the archive's CA file"},
	} {
		o := validOptions()
		o.archive = tc.archive
		if err := o.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: validate() = %v, want %q", tc.archive, err, tc.want)
		}
	}
}
