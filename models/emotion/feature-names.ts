// Owns the emotion mapping model's input contract: the names and order of its feature columns. The engine
// (workers/emotion/engine/features.ts) computes exactly these, the builder and the fit command write them into
// the model's metadata, and the engine refuses a model whose stored names differ. The last two are relative to
// the recording itself and are filled in by the engine after every window is measured.
export const FEATURE_NAMES = [
  'f0_mean_st', // mean F0 in semitones re 27.5 Hz
  'f0_range_st', // 20th–80th percentile range of F0, semitones
  'f0_slope_st_s', // mean F0 slope within voiced runs, semitones per second (rising > 0)
  'jitter_local', // fraction
  'shimmer_local', // fraction
  'hnr_db', // harmonics-to-noise ratio from the autocorrelation peak, dB
  'cpps_db', // cepstral peak prominence, dB
  'alpha_ratio_db', // 1–4 kHz over 50–1000 Hz energy, dB (eGeMAPS sign: flatter tilt → higher)
  'hammarberg_db', // 0–2 kHz peak over 2–4 kHz peak, dB
  'spectral_slope_db_khz', // regression slope of band levels 0.1–3.9 kHz, dB per kHz
  'spectral_flux_db', // RMS change of the band-level shape over 20 ms, dB
  'f1_proxy_hz', // power centroid of the F1 region (250–1000 Hz)
  'f2_proxy_hz', // power centroid of the F2 region (1000–2800 Hz)
  'voiced_fraction', // voiced frames over speech frames
  'syllable_rate', // syllable nuclei per second of speech (de Jong & Wempe 2009)
  'level_range_db', // 90th − 10th percentile of speech frame levels, dB (energy dynamics)
  'h1_h2_db', // first minus second harmonic amplitude, dB (breathy high, pressed low; uncorrected for formants)
  'level_rise_db_s', // mean slope of the rising parts of the speech level contour, dB/s (fast attacks high)
  // Against the recording's own baseline (workers/emotion/engine/relative.ts); missing in short recordings.
  'f0_rel_st', // window's mean F0 minus the recording's median window F0, semitones
  'level_rel_db', // window's median speech level minus the recording's median window level, dB
] as const;

export type FeatureName = (typeof FEATURE_NAMES)[number];

/** The model metadata key that lists FEATURE_NAMES, comma-separated. */
export const FEATURES_METADATA_KEY = 'features';
