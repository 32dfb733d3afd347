// olm-validate: the checks `operator-sdk bundle validate --select-optional suite=operatorframework`
// makes on a registry+v1 bundle directory, built from operator-framework/api alone (the Go module
// proxy serves it; operator-sdk and opm are not served). It prints every finding as
// "<severity> <manifest>: <message>" and exits 1 when any is an error (ADR 0013).
//
// Usage: olm-validate [--k8s-version 1.35] <bundle dir holding manifests/ and metadata/>
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// The optional validators of the operatorframework suite, less MultipleArchitecturesValidator: it
// pulls every image's manifest list with docker or podman, which a test run has neither of nor
// network for (the images are built offline, ADR 0501). The deprecated OperatorHubValidator is
// replaced by the V2 one and the two standard-metadata validators, as its doc comment says.
var operatorFrameworkSuite = interfaces.Validators{
	validation.OperatorHubV2Validator,
	validation.StandardCapabilitiesValidator,
	validation.StandardCategoriesValidator,
	validation.AlphaDeprecatedAPIsValidator,
	validation.GoodPracticesValidator,
	validation.ObjectValidator,
}

// What metadata/annotations.yaml must say for OLM to read the directory as a registry+v1 bundle
// (operator-registry checks these when it unpacks a bundle image; that module is not served).
var registryV1Annotations = map[string]string{
	"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
	"operators.operatorframework.io.bundle.manifests.v1": "manifests/",
	"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
}

func main() {
	k8sVersion := flag.String("k8s-version", "", "the oldest Kubernetes minor the bundle supports, e.g. 1.35 (removed-API checks)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: olm-validate [--k8s-version 1.35] <bundle dir>")
		os.Exit(2)
	}
	dir := flag.Arg(0)

	results := validateAnnotationsFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	bundle, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		fmt.Printf("ERROR bundle %s: %v\n", dir, err)
		os.Exit(1)
	}
	results = append(results, validateBundle(bundle, *k8sVersion)...)

	// Validators overlap (OperatorHubV2 and AlphaDeprecatedAPIs both check removed APIs): each
	// finding is printed once.
	failed := false
	printed := map[string]bool{}
	report := func(line string) {
		if !printed[line] {
			printed[line] = true
			fmt.Println(line)
		}
	}
	for _, result := range results {
		for _, e := range result.Errors {
			failed = true
			report(fmt.Sprintf("ERROR %s: %s", result.Name, e.Error()))
		}
		for _, w := range result.Warnings {
			report(fmt.Sprintf("WARNING %s: %s", result.Name, w.Error()))
		}
	}
	if failed {
		os.Exit(1)
	}
	fmt.Printf("bundle %s (%s) is valid\n", dir, bundle.Name)
}

// validateBundle runs the default bundle validators on what each takes (the bundle, its CSV, its
// CRDs together), then the operatorframework suite on every object with the optional values.
func validateBundle(bundle *manifests.Bundle, k8sVersion string) []errors.ManifestResult {
	results := validation.BundleValidator.Validate(bundle)
	if bundle.CSV == nil {
		return append(results, errors.ManifestResult{Name: bundle.Name, Errors: []errors.Error{
			errors.ErrInvalidBundle("no ClusterServiceVersion in the bundle", bundle.Name),
		}})
	}
	results = append(results, validation.ClusterServiceVersionValidator.Validate(bundle.CSV)...)
	crds := []interface{}{}
	for _, crd := range bundle.V1CRDs {
		crds = append(crds, crd)
	}
	for _, crd := range bundle.V1beta1CRDs {
		crds = append(crds, crd)
	}
	if len(crds) > 0 {
		results = append(results, validation.CustomResourceDefinitionValidator.Validate(crds...)...)
	}
	results = append(results, validateObjectMetadata(bundle))

	objects := append(bundle.ObjectsToValidate(), bundle)
	optionalValues := map[string]string{}
	if k8sVersion != "" {
		optionalValues["k8s-version"] = k8sVersion
	}
	objects = append(objects, optionalValues)
	return append(results, operatorFrameworkSuite.Validate(objects...)...)
}

// validateObjectMetadata checks the metadata of every manifest that is neither the CSV nor a CRD,
// as a client would before applying it (names, labels, annotations).
func validateObjectMetadata(bundle *manifests.Bundle) errors.ManifestResult {
	result := errors.ManifestResult{Name: bundle.Name}
	anyName := func(string, bool) []string { return nil }
	for _, object := range bundle.Objects {
		kind := object.GetKind()
		if kind == "ClusterServiceVersion" || kind == "CustomResourceDefinition" {
			continue
		}
		problems := apimachineryvalidation.ValidateObjectMetaAccessor(object, false, anyName, field.NewPath("metadata"))
		if len(problems) > 0 {
			result.Add(errors.ErrFailedValidation(problems.ToAggregate().Error(), kind+"/"+object.GetName()))
		}
	}
	return result
}

// validateAnnotationsFile checks metadata/annotations.yaml: the registry+v1 keys, a package and
// channels.
func validateAnnotationsFile(path string) []errors.ManifestResult {
	result := errors.ManifestResult{Name: path}
	text, err := os.ReadFile(path)
	if err != nil {
		result.Add(errors.ErrInvalidBundle(fmt.Sprintf("cannot read the bundle annotations: %v", err), path))
		return []errors.ManifestResult{result}
	}
	var file struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.UnmarshalStrict(text, &file); err != nil {
		result.Add(errors.ErrInvalidBundle(fmt.Sprintf("cannot parse the bundle annotations: %v", err), path))
		return []errors.ManifestResult{result}
	}
	for key, want := range registryV1Annotations {
		if got := file.Annotations[key]; got != want {
			result.Add(errors.ErrInvalidBundle(fmt.Sprintf("annotation %s is %q, a registry+v1 bundle needs %q", key, got, want), path))
		}
	}
	for _, key := range []string{
		"operators.operatorframework.io.bundle.package.v1",
		"operators.operatorframework.io.bundle.channels.v1",
	} {
		if file.Annotations[key] == "" {
			result.Add(errors.ErrInvalidBundle(fmt.Sprintf("annotation %s is missing", key), path))
		}
	}
	return []errors.ManifestResult{result}
}
