package archive

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The signing examples of AWS's S3 documentation ("Signature calculations for the Authorization
// header"), with its example credentials: the signature is known, so a byte out of place in the
// canonical request fails here before any server sees it.
func TestSignMatchesAWSExamples(t *testing.T) {
	cred := Credentials{AccessKeyID: "AKIAIOSFODNN7EXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
	at := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, method, url string
		headers           map[string]string
		body              string
		want              string
	}{{
		name: "GET Object with a Range", method: http.MethodGet, url: "https://examplebucket.s3.amazonaws.com/test.txt",
		headers: map[string]string{"Range": "bytes=0-9"},
		want: "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request," +
			"SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
	}, {
		name: "PUT Object, a key with '$'", method: http.MethodPut, url: "https://examplebucket.s3.amazonaws.com/" + uriEncode("test$file.text", true),
		headers: map[string]string{"Date": "Fri, 24 May 2013 00:00:00 GMT", "X-Amz-Storage-Class": "REDUCED_REDUNDANCY"},
		body:    "Welcome to Amazon S3.",
		want: "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request," +
			"SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
	}, {
		name: "GET Bucket (list) with a query", method: http.MethodGet,
		url: "https://examplebucket.s3.amazonaws.com/?" + canonicalQuery(map[string]string{"prefix": "J", "max-keys": "2"}),
		want: "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request," +
			"SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, tc.url, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			sign(req, payloadHash([]byte(tc.body)), cred, "us-east-1", at)
			if got := req.Header.Get("Authorization"); got != tc.want {
				t.Errorf("Authorization\n got %s\nwant %s", got, tc.want)
			}
			if got := req.Header.Get("X-Amz-Content-Sha256"); got != payloadHash([]byte(tc.body)) {
				t.Errorf("x-amz-content-sha256 %s, want the body's SHA-256", got)
			}
		})
	}
}

func TestURIEncode(t *testing.T) {
	for in, want := range map[string][2]string{
		"vmbench/ns/suite/uid/suite.json": {"vmbench/ns/suite/uid/suite.json", "vmbench%2Fns%2Fsuite%2Fuid%2Fsuite.json"},
		"a b+c=d~e_f.g-h":                 {"a%20b%2Bc%3Dd~e_f.g-h", "a%20b%2Bc%3Dd~e_f.g-h"},
		"é":                               {"%C3%A9", "%C3%A9"},
	} {
		if got := uriEncode(in, true); got != want[0] {
			t.Errorf("uriEncode(%q, path) = %q, want %q", in, got, want[0])
		}
		if got := uriEncode(in, false); got != want[1] {
			t.Errorf("uriEncode(%q, query) = %q, want %q", in, got, want[1])
		}
	}
}
