package main

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// fieldManager is the one server-side apply field manager of this operator, as in the TypeScript one.
const fieldManager = "widget-operator"

// WidgetReconciler does what libs/reconcile/src/test-support/widget-operator.ts does (without
// its finalizer, which the benchmark turns off): one owned ConfigMap holding the Widget's size
// (and its labels), an Event when it writes that ConfigMap, and a status with a Ready condition.
// A converged Widget causes no write.
type WidgetReconciler struct {
	client.Client
	Recorder recorder.EventRecorder
}

func (r *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var widget Widget
	if err := r.Get(ctx, req.NamespacedName, &widget); err != nil {
		// Deleted: its ConfigMap goes with it (ownerReference).
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	size := strconv.Itoa(int(widget.Spec.Size))
	var current corev1.ConfigMap
	err := r.Get(ctx, types.NamespacedName{Namespace: widget.Namespace, Name: widget.Name + "-gizmos"}, &current)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("reading the ConfigMap of %s: %w", req.NamespacedName, err)
	}
	if err != nil || current.Data["size"] != size || !metav1.IsControlledBy(&current, &widget) ||
		!hasLabels(current.Labels, widget.Spec.Labels) {
		desired := corev1ac.ConfigMap(widget.Name+"-gizmos", widget.Namespace).
			WithLabels(widget.Spec.Labels).
			WithOwnerReferences(metav1ac.OwnerReference().
				WithAPIVersion(GroupVersion.String()).
				WithKind("Widget").
				WithName(widget.Name).
				WithUID(widget.UID).
				WithController(true).
				WithBlockOwnerDeletion(true)).
			WithData(map[string]string{"size": size})
		if err := r.Apply(ctx, desired, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return ctrl.Result{}, fmt.Errorf("applying the ConfigMap of %s: %w", req.NamespacedName, err)
		}
		r.Recorder.Eventf(&widget, nil, corev1.EventTypeNormal, "GizmosWritten", "Reconcile", "wrote %d gizmos", widget.Spec.Size)
	}

	status := widget.Status.DeepCopy()
	status.ObservedGeneration = widget.Generation
	status.Gizmos = widget.Spec.Size
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type:               "Ready",
		Status:             metav1.ConditionTrue,
		Reason:             "GizmosWritten",
		Message:            fmt.Sprintf("%d gizmos", widget.Spec.Size),
		ObservedGeneration: widget.Generation,
	})
	if equality.Semantic.DeepEqual(*status, widget.Status) {
		return ctrl.Result{}, nil
	}
	apply, err := statusApplyConfiguration(&widget, status)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Status().Apply(ctx, apply, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return ctrl.Result{}, fmt.Errorf("applying the status of %s: %w", req.NamespacedName, err)
	}
	return ctrl.Result{}, nil
}

// hasLabels says whether every wanted label is set as wanted.
func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// statusApplyConfiguration is the status-only apply request for a Widget. A kubebuilder project
// would generate typed apply configurations; an unstructured one says the same on the wire.
func statusApplyConfiguration(widget *Widget, status *WidgetStatus) (runtime.ApplyConfiguration, error) {
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(status)
	if err != nil {
		return nil, fmt.Errorf("encoding the status of %s/%s: %w", widget.Namespace, widget.Name, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": fields}}
	u.SetAPIVersion(GroupVersion.String())
	u.SetKind("Widget")
	u.SetNamespace(widget.Namespace)
	u.SetName(widget.Name)
	return client.ApplyConfigurationFromUnstructured(u), nil
}

// SetupWithManager watches Widgets (spec changes only, as the TypeScript operator's
// generationChanged predicate) and the ConfigMaps they own.
func (r *WidgetReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("widget").
		For(&Widget{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}
