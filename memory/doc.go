// Package memory owns agmem's vocabulary: an Observation (one captured tool call), an
// Event (a session lifecycle moment such as a start, a prompt or an end), the three memory
// types, and the identifiers that name them.
//
// It is the shape that flows one way through agmem: payload → observation → journal →
// batch → files → commit. Every other package speaks it; it imports none of them.
package memory
