package telemetry

// ExportersBuilt is how many exporters this process built.
func ExportersBuilt() int32 { return exportersBuilt.Load() }
