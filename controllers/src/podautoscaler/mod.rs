//! The HorizontalPodAutoscaler controller (autoscaling/v2), upstream
//! `pkg/controller/podautoscaler` (to be written).

pub mod controller;
