package metrics

import "github.com/prometheus/client_golang/prometheus"

// scheduleAwaitingArchive is set by the schedule controller only when the manager archives
// finished suites.
var scheduleAwaitingArchive = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "vmbench_schedule_suites_awaiting_archive",
	Help: "Finished suites of the schedule beyond its history limits that are kept because the archive does not hold them whole yet " +
		"(the store is unreachable or refuses, or their archive is incomplete); the condition AwaitingArchive names them. " +
		"Absent when the manager archives nothing. Labels: namespace, schedule.",
}, scheduleLabels)

// RecordScheduleAwaitingArchive sets how many of the schedule's suites wait for the archive.
func RecordScheduleAwaitingArchive(namespace, name string, n int) {
	scheduleAwaitingArchive.WithLabelValues(labelValue(namespace), labelValue(name)).Set(float64(n))
}

// ForgetScheduleAwaitingArchive deletes the schedule's series of RecordScheduleAwaitingArchive.
func ForgetScheduleAwaitingArchive(namespace, name string) {
	scheduleAwaitingArchive.DeleteLabelValues(labelValue(namespace), labelValue(name))
}
