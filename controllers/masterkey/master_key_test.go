package masterkey

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/platform"
)

var (
	keyRef    = types.NamespacedName{Namespace: "vmbench-system", Name: "vmbench-master-key"}
	recordRef = types.NamespacedName{Namespace: "vmbench-system", Name: "vmbench-master-key-id"}
)

// testMasterKey is a valid master key.
var testMasterKey = platform.MasterKey(bytes.Repeat([]byte("m"), platform.MasterKeySize))

func newKeyClient() client.Client { return fake.NewClientBuilder().WithScheme(scheme.New()).Build() }

// loadFault loads the master key and wants the named fault.
func loadFault(t *testing.T, c client.Client, reason string) *MasterKeyFault {
	t.Helper()
	key, err := LoadMasterKey(context.Background(), c, keyRef)
	var fault *MasterKeyFault
	if !errors.As(err, &fault) || fault.Reason != reason {
		t.Fatalf("LoadMasterKey = %d bytes, %v; want a %s fault", len(key), err, reason)
	}
	if key != nil {
		t.Errorf("a %s fault comes with a key of %d bytes; want none", reason, len(key))
	}
	return fault
}

func getRecord(t *testing.T, c client.Client) *corev1.ConfigMap {
	t.Helper()
	record := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), recordRef, record); err != nil {
		t.Fatalf("the record: %v", err)
	}
	return record
}

func putSecret(t *testing.T, c client.Client, key []byte) {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: keyRef.Name, Namespace: keyRef.Namespace},
		Data: map[string][]byte{MasterKeyData: key}}
	if err := c.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
}

func deleteObject(t *testing.T, c client.Client, obj client.Object, ref types.NamespacedName) {
	t.Helper()
	obj.SetName(ref.Name)
	obj.SetNamespace(ref.Namespace)
	if err := c.Delete(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

func TestMasterKeyIDIsAShortFingerprint(t *testing.T) {
	id := MasterKeyID(testMasterKey)
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(id) {
		t.Errorf("key ID %q, want 16 hex digits", id)
	}
	if MasterKeyID(testMasterKey) != id {
		t.Error("the same key has two IDs")
	}
	other := platform.MasterKey(bytes.Repeat([]byte("n"), platform.MasterKeySize))
	if MasterKeyID(other) == id {
		t.Error("two keys share an ID")
	}
	if strings.Contains(id, string(testMasterKey[:8])) || strings.Contains(id, "6d6d6d6d") {
		t.Errorf("key ID %q shows the key", id)
	}
}

// The first start mints a key and records its ID; the next start reads the same key.
func TestMasterKeyFirstStartMintsAndRecords(t *testing.T) {
	ctx := context.Background()
	c := newKeyClient()
	first, err := LoadMasterKey(ctx, c, keyRef)
	if err != nil {
		t.Fatalf("first start: %v", err)
	}
	if len(first) != platform.MasterKeySize {
		t.Errorf("a new master key of %d bytes", len(first))
	}
	record := getRecord(t, c)
	if record.Data[MasterKeyIDData] != MasterKeyID(first) || record.Data[MasterKeyMintedData] == "" {
		t.Errorf("record %v, want key ID %s and the time of minting", record.Data, MasterKeyID(first))
	}
	if strings.Contains(record.String(), string(first)) {
		t.Error("the record holds the key")
	}

	again, err := LoadMasterKey(ctx, c, keyRef)
	if err != nil || !bytes.Equal(first, again) {
		t.Errorf("the next start reads another key (%v)", err)
	}
	if after := getRecord(t, c); after.ResourceVersion != record.ResourceVersion {
		t.Error("a restart rewrote the record")
	}
}

// A Secret that exists without a record (made by hand, or by a vmbench that kept none) is used and
// recorded, not replaced.
func TestMasterKeyFoundWithoutRecordIsAdopted(t *testing.T) {
	c := newKeyClient()
	putSecret(t, c, testMasterKey)
	got, err := LoadMasterKey(context.Background(), c, keyRef)
	if err != nil || !bytes.Equal(got, testMasterKey) {
		t.Fatalf("LoadMasterKey = %q, %v; want the Secret's key", got, err)
	}
	record := getRecord(t, c)
	if record.Data[MasterKeyIDData] != MasterKeyID(testMasterKey) || record.Data[MasterKeyAdoptedData] == "" || record.Data[MasterKeyMintedData] != "" {
		t.Errorf("record %v, want the Secret's key ID, adopted", record.Data)
	}
}

// Once a key was used, a missing Secret is a named fault and no key is minted.
func TestMasterKeySecretDeletedAfterFirstUseIsMissing(t *testing.T) {
	c := newKeyClient()
	first, err := LoadMasterKey(context.Background(), c, keyRef)
	if err != nil {
		t.Fatal(err)
	}
	deleteObject(t, c, &corev1.Secret{}, keyRef)

	fault := loadFault(t, c, ReasonMasterKeyMissing)
	for _, want := range []string{
		"the master key Secret vmbench-system/vmbench-master-key is missing, but ConfigMap vmbench-system/vmbench-master-key-id records",
		"key ID " + MasterKeyID(first) + ", minted at ",
		"Restore the Secret from backup and restart the manager",
		"delete ConfigMap vmbench-system/vmbench-master-key-id and restart the manager (runs in flight then fail)",
	} {
		if !strings.Contains(fault.Message, want) {
			t.Errorf("message %q\nlacks %q", fault.Message, want)
		}
	}
	err = c.Get(context.Background(), keyRef, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the Secret after the fault: %v; want none minted", err)
	}
	// Restored from backup: the same key is accepted again.
	putSecret(t, c, first)
	if got, err := LoadMasterKey(context.Background(), c, keyRef); err != nil || !bytes.Equal(got, first) {
		t.Errorf("after the restore: %v; want the restored key", err)
	}
}

// A Secret that holds another key than the recorded one is a named fault, naming both IDs.
func TestMasterKeySecretReplacedIsChanged(t *testing.T) {
	c := newKeyClient()
	first, err := LoadMasterKey(context.Background(), c, keyRef)
	if err != nil {
		t.Fatal(err)
	}
	deleteObject(t, c, &corev1.Secret{}, keyRef)
	other := bytes.Repeat([]byte("o"), platform.MasterKeySize)
	putSecret(t, c, other)

	fault := loadFault(t, c, ReasonMasterKeyChanged)
	for _, want := range []string{
		"the master key Secret vmbench-system/vmbench-master-key holds key ID " + MasterKeyID(other),
		"ConfigMap vmbench-system/vmbench-master-key-id records key ID " + MasterKeyID(first),
		"Restore the Secret holding the recorded key from backup and restart the manager",
		"to keep the new key, delete ConfigMap vmbench-system/vmbench-master-key-id and restart the manager",
	} {
		if !strings.Contains(fault.Message, want) {
			t.Errorf("message %q\nlacks %q", fault.Message, want)
		}
	}
}

// A Secret whose key is too short is a named fault, not a crash and not a new key.
func TestMasterKeyUnusableIsInvalid(t *testing.T) {
	c := newKeyClient()
	putSecret(t, c, []byte("short"))
	fault := loadFault(t, c, ReasonMasterKeyInvalid)
	if !strings.Contains(fault.Message, "the master key has 5 bytes, want at least 32") ||
		!strings.Contains(fault.Message, "delete Secret vmbench-system/vmbench-master-key and ConfigMap vmbench-system/vmbench-master-key-id") {
		t.Errorf("message %q: want the cause and what to do", fault.Message)
	}
}

// Rotation: with the record deleted, the next start takes a new key, whether the Secret was deleted
// too (a new key is minted) or replaced by the admin (the new Secret is recorded).
func TestMasterKeyRotationAfterTheRecordIsDeleted(t *testing.T) {
	ctx := context.Background()
	c := newKeyClient()
	first, err := LoadMasterKey(ctx, c, keyRef)
	if err != nil {
		t.Fatal(err)
	}
	deleteObject(t, c, &corev1.Secret{}, keyRef)
	deleteObject(t, c, &corev1.ConfigMap{}, recordRef)
	second, err := LoadMasterKey(ctx, c, keyRef)
	if err != nil || bytes.Equal(first, second) {
		t.Fatalf("rotation by deleting both: %v (same key: %v); want a new key", err, bytes.Equal(first, second))
	}
	if id := getRecord(t, c).Data[MasterKeyIDData]; id != MasterKeyID(second) {
		t.Errorf("record after rotation: %s, want %s", id, MasterKeyID(second))
	}

	// An admin's own key: replace the Secret, delete the record.
	deleteObject(t, c, &corev1.Secret{}, keyRef)
	own := bytes.Repeat([]byte("a"), platform.MasterKeySize)
	putSecret(t, c, own)
	_ = loadFault(t, c, ReasonMasterKeyChanged)
	deleteObject(t, c, &corev1.ConfigMap{}, recordRef)
	third, err := LoadMasterKey(ctx, c, keyRef)
	if err != nil || !bytes.Equal(third, own) {
		t.Fatalf("rotation to the admin's key: %v; want the admin's key", err)
	}
	if id := getRecord(t, c).Data[MasterKeyIDData]; id != MasterKeyID(own) {
		t.Errorf("record after rotation: %s, want %s", id, MasterKeyID(own))
	}
}

// Replicas starting together: the one that loses the race for the Secret reads the winner's key, and
// the one that loses the race for the record reads the winner's record.
func TestMasterKeyRaces(t *testing.T) {
	raced := raceClient{Client: newKeyClient(), key: bytes.Repeat([]byte("w"), 32)}
	got, err := LoadMasterKey(context.Background(), raced, keyRef)
	if err != nil || !bytes.Equal(got, raced.key) {
		t.Errorf("after lost races: %q, %v; want the winner's key", got, err)
	}
	if id := getRecord(t, raced.Client).Data[MasterKeyIDData]; id != MasterKeyID(raced.key) {
		t.Errorf("record %s, want the winner's key ID %s", id, MasterKeyID(raced.key))
	}
}

// raceClient is a client whose first Gets miss the Secret and the record that another replica
// creates before this one's Create.
type raceClient struct {
	client.Client
	key []byte
}

func (c raceClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	var winner client.Object
	switch o := obj.(type) {
	case *corev1.Secret:
		s := o.DeepCopy()
		s.Data = map[string][]byte{MasterKeyData: c.key}
		winner = s
	case *corev1.ConfigMap:
		m := o.DeepCopy()
		m.Data = map[string]string{MasterKeyIDData: MasterKeyID(c.key), MasterKeyMintedData: "2026-11-27T06:00:00Z"}
		winner = m
	}
	if err := c.Client.Create(ctx, winner); err != nil {
		return err
	}
	return apierrors.NewAlreadyExists(corev1.Resource("objects"), obj.GetName())
}
