// The benchmark's controller-runtime operator: the Widget workload of `npm run bench:reconcile`,
// written as a kubebuilder project would write it, so the TypeScript library has an honest
// reference. Built from the Go module proxy by tools/build-binaries.sh (bench-widget-operator).
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func main() {
	var namespace, metricsAddr string
	var workers int
	var jsonOnly bool
	flag.StringVar(&namespace, "namespace", "", "the only namespace to watch (required)")
	flag.IntVar(&workers, "workers", 4, "MaxConcurrentReconciles of the Widget controller")
	flag.StringVar(&metricsAddr, "metrics-bind-address", "127.0.0.1:8080", "where /metrics is served")
	flag.BoolVar(&jsonOnly, "json", false, "speak JSON for built-in kinds too, as the TypeScript library does (default: controller-runtime's protobuf for them)")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")
	if namespace == "" {
		log.Error(nil, "--namespace is required")
		os.Exit(2)
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		log.Error(err, "registering the built-in types")
		os.Exit(1)
	}
	if err := SchemeBuilder.AddToScheme(scheme); err != nil {
		log.Error(err, "registering the Widget types")
		os.Exit(1)
	}

	// The kubeconfig comes from KUBECONFIG; ctrl.GetConfig also turns client-side rate limiting
	// off (the API server's priority and fairness limits instead), as it does for every operator.
	config := ctrl.GetConfigOrDie()
	if jsonOnly {
		config.ContentType = "application/json"
	}
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Scheme: scheme,
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{namespace: {}},
			// controller-runtime's advice for a reconciler that never reads managedFields; the
			// library's cache likewise keeps only its own manager's entries.
			DefaultTransform: cache.TransformStripManagedFields(),
		},
		Metrics: metricsserver.Options{BindAddress: metricsAddr},
	})
	if err != nil {
		log.Error(err, "creating the manager")
		os.Exit(1)
	}
	reconciler := &WidgetReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(fieldManager)}
	if err := reconciler.SetupWithManager(mgr, workers); err != nil {
		log.Error(err, "creating the Widget controller")
		os.Exit(1)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "running the manager")
		os.Exit(1)
	}
}
