package main

import (
	"flag"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	archivecontroller "github.com/vmbench/vmbench/controllers/archive"
	schedulecontroller "github.com/vmbench/vmbench/controllers/schedule"
	"github.com/vmbench/vmbench/internal/archive"
)

// archiveOptions are the flags of the archive of finished suites in S3-compatible object storage
// (docs/archive.md); without an endpoint and a bucket there is no archive.
type archiveOptions struct {
	endpoint, bucket, prefix, region, caFile, credentialsDir string
}

func (a *archiveOptions) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&a.endpoint, "archive-s3-endpoint", "",
		"URL of the S3-compatible server (http:// or https://) that keeps a copy of every finished suite, its status and result tables; "+
			"with --archive-s3-bucket. Credentials come from the files of --archive-s3-credentials-dir, else AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "+
			"(and AWS_SESSION_TOKEN) in the environment, else a web identity token (IRSA) or EKS Pod Identity. Empty: no archive.")
	fs.StringVar(&a.bucket, "archive-s3-bucket", "", "Bucket of the archive, addressed path-style; it must exist.")
	fs.StringVar(&a.prefix, "archive-s3-prefix", "", "Key prefix of the archive in the bucket, e.g. vmbench/prod; empty: the bucket's top.")
	fs.StringVar(&a.region, "archive-s3-region", archive.DefaultRegion, "Region the archive's requests are signed for.")
	fs.StringVar(&a.credentialsDir, "archive-s3-credentials-dir", "",
		"Directory (a mounted Secret) holding the archive's keys in files AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, optionally, AWS_SESSION_TOKEN; "+
			"they are read again when they change, so a rotated Secret needs no restart.")
	fs.StringVar(&a.caFile, "archive-s3-ca-file", "", "PEM file of the CA certificates that the archive's https:// endpoint is verified with, beside the system's.")
}

func (a archiveOptions) enabled() bool { return a.endpoint != "" || a.bucket != "" }

// validate checks the flags; the credentials are checked when the store is made.
func (a archiveOptions) validate() error {
	switch {
	case !a.enabled():
		if a.prefix != "" || a.caFile != "" || a.credentialsDir != "" {
			return fmt.Errorf("--archive-s3-prefix, --archive-s3-ca-file or --archive-s3-credentials-dir is set without --archive-s3-endpoint and --archive-s3-bucket: " +
				"give both to archive finished suites, or drop the other archive flags")
		}
		return nil
	case a.endpoint == "":
		return fmt.Errorf("--archive-s3-bucket=%q is set without --archive-s3-endpoint: give the URL of the S3-compatible server too", a.bucket)
	case a.bucket == "":
		return fmt.Errorf("--archive-s3-endpoint=%q is set without --archive-s3-bucket: give the bucket too", a.endpoint)
	case strings.HasPrefix(a.prefix, "/"):
		return fmt.Errorf("--archive-s3-prefix=%q: give the prefix without a leading '/'", a.prefix)
	}
	_, err := a.config(archive.Static(archive.Credentials{AccessKeyID: "-", SecretAccessKey: "-"}))
	return err
}

func (a archiveOptions) config(cred *archive.CredentialSource) (*archive.S3, error) {
	return archive.New(archive.Config{Endpoint: a.endpoint, Bucket: a.bucket, Region: a.region, CAFile: a.caFile, Credentials: cred})
}

// setup adds the archive's controller to the manager, if the flags ask for one, and tells the
// schedules to delete a suite only once it is archived whole.
func (a archiveOptions) setup(mgr ctrl.Manager, schedules *schedulecontroller.ScheduleReconciler) error {
	if !a.enabled() {
		return nil
	}
	cred, err := archive.FromEnvironment(a.credentialsDir)
	if err != nil {
		return err
	}
	store, err := a.config(cred)
	if err != nil {
		return err
	}
	logger := ctrl.Log.WithName("setup")
	logger.Info("archive of finished suites", "location", store.Location(strings.Trim(a.prefix, "/")), "credentials", cred.String())
	if store.Insecure() {
		logger.Info("WARNING: the archive's endpoint is plain http://: anyone on the path can read and change what is archived, "+
			"or answer that a suite is archived when it is not; use an https:// endpoint", "endpoint", a.endpoint)
	}
	r := &archivecontroller.ArchiveReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Store: store, Prefix: a.prefix,
		Recorder: mgr.GetEventRecorder("vmbench"),
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the archive controller: %w", err)
	}
	schedules.Archive = true
	return nil
}
