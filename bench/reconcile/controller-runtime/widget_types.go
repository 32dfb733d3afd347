package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// The Widget kind of libs/reconcile's test support (src/test-support/widget.ts), as a kubebuilder
// project would declare it. The deep-copy methods below are what controller-gen generates; they
// are written out so that building this operator needs only `go build`.

// GroupVersion is the API group and version of Widgets.
var GroupVersion = schema.GroupVersion{Group: "test.reconcile.homeostat.dev", Version: "v1"}

// SchemeBuilder registers the Widget types with a scheme.
var SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

func init() {
	SchemeBuilder.Register(&Widget{}, &WidgetList{})
}

// WidgetSpec is what the user asks for.
type WidgetSpec struct {
	Size   int32             `json:"size"`
	Color  string            `json:"color,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	Zone   string            `json:"zone,omitempty"`
}

// WidgetStatus is what the operator reports. Gizmos has no omitempty: a Widget of size 0 reports 0.
type WidgetStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Gizmos             int32              `json:"gizmos"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// Widget owns one ConfigMap holding its size.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func (in *WidgetSpec) DeepCopyInto(out *WidgetSpec) {
	*out = *in
	if in.Labels != nil {
		out.Labels = make(map[string]string, len(in.Labels))
		for k, v := range in.Labels {
			out.Labels[k] = v
		}
	}
}

func (in *WidgetStatus) DeepCopyInto(out *WidgetStatus) {
	*out = *in
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

func (in *WidgetStatus) DeepCopy() *WidgetStatus {
	out := new(WidgetStatus)
	in.DeepCopyInto(out)
	return out
}

func (in *Widget) DeepCopyInto(out *Widget) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

func (in *Widget) DeepCopy() *Widget {
	out := new(Widget)
	in.DeepCopyInto(out)
	return out
}

func (in *Widget) DeepCopyObject() runtime.Object {
	return in.DeepCopy()
}

func (in *WidgetList) DeepCopyInto(out *WidgetList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Widget, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

func (in *WidgetList) DeepCopyObject() runtime.Object {
	out := new(WidgetList)
	in.DeepCopyInto(out)
	return out
}
