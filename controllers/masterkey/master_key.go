package masterkey

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
)

// The master key's lifecycle. The key lives in a Secret in the manager's namespace; its key ID (a
// fingerprint, never the key) lives in a ConfigMap beside it, <secret>-id, written when the key is
// first used. The manager mints a key only when neither exists: a missing Secret whose record
// remains, or a Secret whose key is not the recorded one, is a named condition (MasterKeyMissing,
// MasterKeyChanged), never a silent replacement that would fail every run in flight. The manager
// starts all the same: suites not admitted yet stay in line, and runs that need the key (to start or
// to be collected) fail with the cause, so that no suite holds the run slot while the key is away.

// MasterKeyData is the key of the master key in its Secret.
const MasterKeyData = "key"

// The keys of the master key's record, a ConfigMap named after the Secret.
const (
	// MasterKeyRecordSuffix makes the record's name from the Secret's.
	MasterKeyRecordSuffix = "-id"
	// MasterKeyIDData holds the key ID.
	MasterKeyIDData = "keyID"
	// MasterKeyMintedData holds when the manager minted the key (RFC 3339).
	MasterKeyMintedData = "mintedAt"
	// MasterKeyAdoptedData holds when the manager first recorded a key that it found in the Secret
	// (made by hand, or by a vmbench that kept no record).
	MasterKeyAdoptedData = "adoptedAt"
)

// Reasons for a master key that the manager cannot use.
const (
	// ReasonMasterKeyMissing: the Secret is gone while its record remains.
	ReasonMasterKeyMissing = "MasterKeyMissing"
	// ReasonMasterKeyChanged: the Secret holds another key than the recorded one, or a run was started
	// under another key than the manager's.
	ReasonMasterKeyChanged = "MasterKeyChanged"
	// ReasonMasterKeyInvalid: the Secret holds no usable key.
	ReasonMasterKeyInvalid = "MasterKeyInvalid"
)

// MasterKeyID is the ID of a master key: the hex of the first 8 bytes of HMAC-SHA256(key, "vmbench
// key id"). It tells keys apart and reveals nothing of them.
func MasterKeyID(key platform.MasterKey) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("vmbench key id"))
	return hex.EncodeToString(mac.Sum(nil)[:8])
}

// MasterKeyRecord is where the key ID of the master key in Secret secret is recorded.
func MasterKeyRecord(secret types.NamespacedName) types.NamespacedName {
	return types.NamespacedName{Namespace: secret.Namespace, Name: secret.Name + MasterKeyRecordSuffix}
}

// MasterKeyFault is why the manager has no usable master key. The manager starts with it: suites
// not admitted wait, and runs that need the key fail with it.
type MasterKeyFault struct {
	Reason  string
	Message string
}

func (f *MasterKeyFault) Error() string { return f.Reason + ": " + f.Message }

// LoadMasterKey reads the master key from its Secret and checks it against its record. On the
// manager's first start, when neither exists, it mints a key into the Secret and then records its
// ID; a Secret without a record (an upgrade, a key made by hand) is recorded as it is. A missing
// Secret whose record remains, a key other than the recorded one, or an unusable key is returned as
// a *MasterKeyFault, and no key is made. Replicas starting together agree: one creates, the others
// read.
func LoadMasterKey(ctx context.Context, c client.Client, ref types.NamespacedName) (platform.MasterKey, error) {
	recordRef := MasterKeyRecord(ref)
	record := &corev1.ConfigMap{}
	if err := c.Get(ctx, recordRef, record); apierrors.IsNotFound(err) {
		record = nil
	} else if err != nil {
		return nil, fmt.Errorf("master key record ConfigMap %s: %w", recordRef, err)
	}
	secret := &corev1.Secret{}
	err := c.Get(ctx, ref, secret)
	minted := false
	if apierrors.IsNotFound(err) {
		if record != nil {
			return nil, missingKey(ref, recordRef, record)
		}
		secret, minted, err = mintMasterKey(ctx, c, ref)
	}
	if err != nil {
		return nil, fmt.Errorf("master key Secret %s: %w", ref, err)
	}
	master := platform.MasterKey(secret.Data[MasterKeyData])
	if err := master.Validate(); err != nil {
		return nil, &MasterKeyFault{Reason: ReasonMasterKeyInvalid, Message: fmt.Sprintf("master key Secret %s, key %q: %v, so the manager "+
			"cannot use it and made no new key: runs cannot start or be collected. Restore the Secret from backup and restart the "+
			"manager; or, to start over with a new key, delete Secret %s and ConfigMap %s and restart the manager (runs in flight then fail)",
			ref, MasterKeyData, err, ref, recordRef)}
	}
	id := MasterKeyID(master)
	if record == nil {
		if record, err = recordMasterKey(ctx, c, recordRef, id, minted); err != nil {
			return nil, err
		}
	}
	if recorded := record.Data[MasterKeyIDData]; recorded != id {
		return nil, changedKey(ref, recordRef, record, id)
	}
	return master, nil
}

// mintMasterKey creates the Secret with a new random key; minted is false when another replica
// created it first.
func mintMasterKey(ctx context.Context, c client.Client, ref types.NamespacedName) (secret *corev1.Secret, minted bool, err error) {
	fresh := make([]byte, platform.MasterKeySize)
	if _, err := rand.Read(fresh); err != nil {
		return nil, false, fmt.Errorf("generating the master key: %w", err)
	}
	secret = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace, Labels: masterKeyLabels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{MasterKeyData: fresh},
	}
	err = c.Create(ctx, secret, client.FieldOwner(vmbenchv1.FieldManager))
	if apierrors.IsAlreadyExists(err) {
		secret = &corev1.Secret{}
		return secret, false, c.Get(ctx, ref, secret)
	}
	return secret, err == nil, err
}

// recordMasterKey records the key ID of the master key, or reads the record that another replica
// wrote first.
func recordMasterKey(ctx context.Context, c client.Client, ref types.NamespacedName, id string, minted bool) (*corev1.ConfigMap, error) {
	when := MasterKeyAdoptedData
	if minted {
		when = MasterKeyMintedData
	}
	record := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace, Labels: masterKeyLabels()},
		Data:       map[string]string{MasterKeyIDData: id, when: time.Now().UTC().Format(time.RFC3339)},
	}
	err := c.Create(ctx, record, client.FieldOwner(vmbenchv1.FieldManager))
	if apierrors.IsAlreadyExists(err) {
		record = &corev1.ConfigMap{}
		err = c.Get(ctx, ref, record)
	}
	if err != nil {
		return nil, fmt.Errorf("recording the master key's ID in ConfigMap %s: %w", ref, err)
	}
	return record, nil
}

func masterKeyLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": "vmbench", "app.kubernetes.io/component": "master-key"}
}

// recordedKey describes the key of a record: its ID and when it was minted or first recorded.
func recordedKey(record *corev1.ConfigMap) string {
	id := record.Data[MasterKeyIDData]
	if id == "" {
		id = "(none)"
	}
	switch {
	case record.Data[MasterKeyMintedData] != "":
		return fmt.Sprintf("key ID %s, minted at %s", id, record.Data[MasterKeyMintedData])
	case record.Data[MasterKeyAdoptedData] != "":
		return fmt.Sprintf("key ID %s, first used at %s", id, record.Data[MasterKeyAdoptedData])
	}
	return "key ID " + id
}

func missingKey(ref, recordRef types.NamespacedName, record *corev1.ConfigMap) *MasterKeyFault {
	return &MasterKeyFault{Reason: ReasonMasterKeyMissing, Message: fmt.Sprintf("the master key Secret %s is missing, but ConfigMap %s "+
		"records that a key was in use (%s), so the manager made no new key: runs cannot start or be collected. Restore the Secret "+
		"from backup and restart the manager; or, to start over with a new key, delete ConfigMap %s and restart the manager "+
		"(runs in flight then fail)", ref, recordRef, recordedKey(record), recordRef)}
}

func changedKey(ref, recordRef types.NamespacedName, record *corev1.ConfigMap, id string) *MasterKeyFault {
	return &MasterKeyFault{Reason: ReasonMasterKeyChanged, Message: fmt.Sprintf("the master key Secret %s holds key ID %s, but ConfigMap %s "+
		"records %s: the Secret was replaced, so the manager does not use it: runs cannot start or be collected. Restore the Secret "+
		"holding the recorded key from backup and restart the manager; or, to keep the new key, delete ConfigMap %s and restart the "+
		"manager (runs in flight then fail)", ref, id, recordRef, recordedKey(record), recordRef)}
}
