//! ControllerRevision history shared by the StatefulSet and DaemonSet
//! controllers. Upstream: `pkg/controller/history/controller_history.go`.
//! SKELETON: filled by the StatefulSet work.
