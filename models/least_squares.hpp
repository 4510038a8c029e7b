// The parameter covariance of a weighted least-squares fit, shared by the kernel model's
// calibration (models/calibration.cpp) and the framework-op model's identifiability
// (models/op_framework_ident.cpp). Gauss-Newton: cov = sigma^2 (J^T W J)^-1, taken through the
// eigen-decomposition of J^T W J so that a direction the data leave flat (an eigenvalue under
// 1e-10 of the largest) is reported as undetermined instead of inverted: every parameter with a
// component above 0.1 on such a direction is marked, and the direction adds nothing to the
// variances of the others.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <vector>

namespace ridge::models {

struct GaussNewtonVariance {
  Eigen::VectorXd var;             ///< diagonal of (J^T W J)^-1 over the determined directions
  std::vector<bool> undetermined;  ///< parameters the data do not pin down
};

/// J: residual derivatives (one column per parameter); w: the residuals' weights.
inline GaussNewtonVariance gauss_newton_variance(const Eigen::MatrixXd& J,
                                                 const Eigen::VectorXd& w) {
  const Eigen::Index n = J.cols();
  const Eigen::MatrixXd A = J.transpose() * w.asDiagonal() * J;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(A);
  const Eigen::VectorXd lam = es.eigenvalues();
  const Eigen::MatrixXd V = es.eigenvectors();
  const double lmax = std::max(lam.maxCoeff(), 1e-300);
  GaussNewtonVariance out{Eigen::VectorXd::Zero(n), std::vector<bool>(static_cast<size_t>(n))};
  for (Eigen::Index k = 0; k < n; ++k) {
    if (lam[k] <= 1e-10 * lmax) {
      for (Eigen::Index j = 0; j < n; ++j)
        if (std::fabs(V(j, k)) > 0.1) out.undetermined[static_cast<size_t>(j)] = true;
      continue;
    }
    for (Eigen::Index j = 0; j < n; ++j) out.var[j] += V(j, k) * V(j, k) / lam[k];
  }
  return out;
}

}  // namespace ridge::models
